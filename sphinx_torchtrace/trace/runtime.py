"""What ran: each compiled region's calls and time, read from torch's own profile.

``sphinx-torchtrace run --runtime`` starts ``torch.profiler`` in the program
(``runtime_boot/sitecustomize.py``) and keeps its Chrome trace beside the trace log, in
``runtime/``.  Torch marks every call of compiled code with an event named
``Torch-Compiled Region: <compile id>`` and every compile with one named ``dynamo`` (a
frame's) or ``entire_backward_compile`` (a backward graph's, at its first backward pass);
this module reads those events and nothing else (no guess from names of kernels or ops):

* a region's **calls**, **total** time (its events' durations) and **own** time (less the
  regions and compiles that ran inside it: a graph break's resume function is called from
  the region before it, and its first call compiles it), median and first and last call,
  relative to the start of the profile;
* the **profiled** time (the profiler's own event), **compiled** time (own time of every
  region), **compiling** (the compile events, outside any region or inside) and **eager**
  time: the rest, Python and eager ops between regions (graph breaks, the program's own
  code).

A profile of the same program run with every graph on the eager backend (``mode`` eager,
``TORCH_COMPILE_OVERRIDE_BACKENDS``) gives the same regions' eager times: the
:func:`worth_it` table.

A profile is input like a log (a folder attached to a bug report): it is read as a
stream, event by event, each call added to its region's figures as it comes, so the
memory a reading holds is bounded (:data:`MEMORY_BOUND`) whatever the file; a compressed
file that expands too much (:data:`MAX_EXPANSION`) or a profile past the limits below is
refused with a warning that says why.  Profiles are matched to ranks by process id and
the rank their meta file names; two profiles claiming one rank's process are shown for
neither (:func:`profile_claims` says so), never one rank's figures as another's.
"""

from __future__ import annotations

import codecs
import gzip
import heapq
import json
import math
import os
import re
import statistics
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol, TypeGuard

from .folders import list_folder, real_root, refusal

#: The folder beside the trace logs that holds the profiles.
RUNTIME_DIR = "runtime"
REGION = "Torch-Compiled Region: "
#: torch's timers of a compile: a frame's (``dynamo``), and the backward graph's, compiled
#: lazily at the first backward pass, inside the region that runs it.
COMPILES = frozenset({"dynamo", "entire_backward_compile"})
PROFILER = "PyTorch Profiler"
#: The bootstrap put first on a profiled program's PYTHONPATH.
BOOT_DIR = Path(__file__).with_name("runtime_boot")
#: Every graph on Dynamo's eager backend: torch's own override of the backend.
EAGER_BACKENDS = ">=0:eager"
#: A profile that expands to more than this is not read, a warning says so.  A whole long
#: run is larger: profile a window (--steps).
MAX_PROFILE_BYTES = 256 << 20
#: A compressed profile is refused once it has expanded to more than this many times the
#: compressed bytes read so far (plus :data:`EXPANSION_SLACK`).  torch's profiles expand
#: 12 to 15 times; a file made to expand (a few repeated events, a gzip bomb) is refused
#: after a few megabytes, before it is parsed or published.
MAX_EXPANSION = 100
EXPANSION_SLACK = 1 << 20
#: One event (or any value of the file's top level but ``traceEvents``) longer than this
#: is refused: it is held whole while parsed.
MAX_EVENT_BYTES = 1 << 20
#: Calls of compiled regions a profile may hold: each call's own time is kept (8 bytes)
#: for the medians.  torch writes several events per call, so 256 MB of its JSON holds
#: fewer; a profile with more is refused.
MAX_CALLS = 1_000_000
#: Distinct compile ids, threads, and regions open at once (nested in one another, on
#: all its threads together) a profile may hold; a region's or thread's name longer than
#: :data:`MAX_NAME` characters is refused (torch's are a few dozen).
MAX_REGIONS = 10_000
MAX_THREADS = 1_000
MAX_DEPTH = 1_000
MAX_NAME = 256
#: What a folder's profiles hold together at most: profiles read, and compile ids kept
#: (each profile is read in bounded memory; these bound the figures kept of all).  The
#: profiles past either are not read, and a warning says how many.
MAX_PROFILES = 1_024
MAX_FOLDER_REGIONS = 100_000
#: Events of one thread may come this far out of order (torch writes them in order):
#: they wait in a window this long, sorted, before they are nested.
WINDOW = 16_384
#: The meta file beside a profile is read up to this size (torch's is 200 bytes).
MAX_META_BYTES = 64 << 10
#: Memory a profile's reading holds, whatever the file: a chunk of the file and one event
#: (about 2 MB), the window (about 3 MB), the calls' own times (8 MB) and their sort for
#: the medians (40 MB).  The tests hold a reading to this peak above the interpreter's.
MEMORY_BOUND = 96 << 20
_CHUNK = 1 << 18


def runtime_environment(
    out: Path, steps: tuple[int, int] | None = None, eager: bool = False
) -> dict[str, str]:
    """What a program's environment gains to be profiled into ``out`` (see
    ``runtime_boot/sitecustomize.py``); ``eager``: every graph on the eager backend."""
    path = os.environ.get("PYTHONPATH", "")
    env = {
        "PYTHONPATH": os.pathsep.join([str(BOOT_DIR), *([path] if path else [])]),
        "SPHINX_TORCHTRACE_RUNTIME": str(out),
        "SPHINX_TORCHTRACE_RUNTIME_MODE": "eager" if eager else "compiled",
    }
    if steps is not None:
        env["SPHINX_TORCHTRACE_RUNTIME_STEPS"] = f"{steps[0]}:{steps[1]}"
    if eager:
        env["TORCH_COMPILE_OVERRIDE_BACKENDS"] = EAGER_BACKENDS
    return env


def parse_steps(text: str) -> tuple[int, int]:
    """``10:20`` -> (10, 20): optimizer steps 10 to 20 (``:20``: from the start)."""
    first, sep, last = text.partition(":")
    try:
        a, b = int(first or 0), int(last)
    except ValueError:
        raise ValueError(f"{text!r}: give FIRST:LAST optimizer steps, as 10:20") from None
    if not sep or a < 0 or b <= a:
        raise ValueError(f"{text!r}: give FIRST:LAST with 0 <= FIRST < LAST, as 10:20")
    return a, b


class ProfileError(ValueError):
    """A profile that cannot be read: its file and why."""


@dataclass
class RegionRuns:
    """The calls of one compile id's compiled code (times in microseconds); the medians
    and the first call's time are figured once its profile is read."""

    compile_id: str
    calls: int = 0
    total_us: float = 0.0
    own_us: float = 0.0
    first_us: float = 0.0
    last_us: float = 0.0
    median_us: float = 0.0
    first_call_us: float = 0.0
    #: The median own time of the calls after the first (the first pays for warm-up:
    #: loading the kernels, the first guard checks); the first call's own when alone.
    later_median_us: float = 0.0
    _own: array[float] = field(default_factory=lambda: array("d"), repr=False)

    def _settle(self, base: float) -> None:
        """The figures of the calls read, times relative to ``base``; the calls' own
        times are let go (8 bytes a call)."""
        own = self._own
        self.own_us = sum(own)
        self.first_us -= base
        self.last_us -= base
        self.median_us = statistics.median(own) if own else 0.0
        self.first_call_us = own[0] if own else 0.0
        self.later_median_us = statistics.median(own[1:]) if len(own) > 1 else self.first_call_us
        self._own = array("d")


@dataclass
class RuntimeProfile:
    """One process's profile: its regions and where its time went."""

    path: str  # the file's name, as pages show it
    file: str = ""  # where it is, to copy it for download
    mode: str = "compiled"  # or "eager": every graph on the eager backend
    rank: int | None = None
    pid: int | None = None
    wall_s: float | None = None  # the process, start to exit (from the meta file)
    steps: tuple[int, int] | None = None  # optimizer steps profiled, or the whole run
    profiled_us: float = 0.0
    compiled_us: float = 0.0
    compiling_us: float = 0.0
    compiles: int = 0
    regions: dict[str, RegionRuns] = field(default_factory=dict)

    @property
    def eager_us(self) -> float:
        return max(self.profiled_us - self.compiled_us - self.compiling_us, 0.0)


def read_profile(path: Path, root: str | None = None) -> RuntimeProfile:
    """The profile at ``path`` (``profile-<pid>.json.gz`` or plain JSON) and its meta file
    (read only if it stays inside ``root``, the real path of the folder the user named;
    the profile's own folder when None)."""
    try:
        with _Chunks(path) as chunks:
            profile = profile_of(_trace_events(_Stream(chunks, path.name)), path.name)
    except ProfileError:
        raise
    except (OSError, EOFError, ValueError, RecursionError, zlib.error) as e:
        raise ProfileError(f"{path.name}: not a readable profile ({type(e).__name__})") from None
    profile.file = str(path)
    _read_meta(profile, path, real_root(path.parent) if root is None else root)
    return profile


class _Chunks:
    """A profile's text, a chunk at a time, counted: refused past
    :data:`MAX_PROFILE_BYTES`, or (compressed) past :data:`MAX_EXPANSION`."""

    def __init__(self, path: Path) -> None:
        self.name = path.name
        self.raw: IO[bytes] = open(path, "rb")  # noqa: SIM115 (closed by __exit__)
        self.unpacked: gzip.GzipFile | None = None
        if path.name.endswith(".gz"):
            self.unpacked = gzip.GzipFile(fileobj=self.raw, mode="rb")
        self.text = codecs.getincrementaldecoder("utf-8-sig")("strict")
        self.read = 0

    def __enter__(self) -> Iterator[str]:
        return self._chunks()

    def __exit__(self, *exc: object) -> None:
        if self.unpacked is not None:
            self.unpacked.close()
        self.raw.close()

    def _chunks(self) -> Iterator[str]:
        source: IO[bytes] | gzip.GzipFile = self.raw if self.unpacked is None else self.unpacked
        while True:
            data = source.read(_CHUNK)
            self.read += len(data)
            if self.read > MAX_PROFILE_BYTES:
                raise ProfileError(
                    f"{self.name}: more than {MAX_PROFILE_BYTES >> 20} MB of events, more than "
                    "is read; profile a window of the run (run --runtime --steps FIRST:LAST)"
                )
            if self.unpacked is not None and self.read > (
                MAX_EXPANSION * self.raw.tell() + EXPANSION_SLACK
            ):
                raise ProfileError(
                    f"{self.name}: expands more than {MAX_EXPANSION} times (torch's profiles "
                    "expand about 15 times): not read"
                )
            if not data:
                yield self.text.decode(b"", final=True)
                return
            yield self.text.decode(data)


_BLANK = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class _Stream:
    """JSON text read a value at a time: at most a chunk and one value held."""

    def __init__(self, chunks: Iterator[str], name: str) -> None:
        self.chunks = chunks
        self.name = name
        self.text = ""
        self.at = 0
        self.ended = False

    def _more(self) -> bool:
        if self.ended:
            return False
        chunk = next(self.chunks, None)
        if chunk is None:
            self.ended = True
            return False
        self.text = self.text[self.at :] + chunk
        self.at = 0
        return True

    def peek(self) -> str:
        """The next character that is not blank ("" at the end), not taken."""
        while True:
            found = _BLANK.match(self.text, self.at)
            self.at = found.end() if found else self.at
            if self.at < len(self.text):
                return self.text[self.at]
            if not self._more():
                return ""

    def take(self, expected: str) -> None:
        if self.peek() != expected:
            raise ProfileError(f"{self.name}: not a readable profile (not JSON)")
        self.at += 1

    def value(self) -> object:
        """The next JSON value (after :meth:`peek`), at most :data:`MAX_EVENT_BYTES` long."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.at)
            except json.JSONDecodeError:
                if self.ended:
                    raise ProfileError(f"{self.name}: not a readable profile (not JSON)") from None
            else:  # a number at the end of the text may go on in the next chunk
                if end < len(self.text) or self.ended:
                    self.at = end
                    return value
            if len(self.text) - self.at > MAX_EVENT_BYTES:
                raise ProfileError(
                    f"{self.name}: an event of more than {MAX_EVENT_BYTES >> 20} MB, "
                    "or not JSON: not read"
                )
            self._more()


def _trace_events(stream: _Stream) -> Iterator[object]:
    """The elements of the top-level object's ``traceEvents`` list, one at a time; the
    other values of the top level are read and let go."""
    name = stream.name
    not_chrome = ProfileError(f"{name}: no traceEvents: not a Chrome trace of torch")
    if stream.peek() != "{":
        raise not_chrome
    stream.take("{")
    seen = False
    while stream.peek() != "}":
        if stream.peek() == "":
            raise ProfileError(f"{name}: not a readable profile (cut short)")
        key = stream.value()
        stream.take(":")
        if key != "traceEvents":
            stream.value()
        elif seen:
            raise ProfileError(f"{name}: traceEvents twice: not a Chrome trace of torch")
        elif stream.peek() != "[":
            raise not_chrome
        else:
            seen = True
            stream.take("[")
            if stream.peek() == "]":
                stream.take("]")
            else:
                while True:
                    yield stream.value()
                    if stream.peek() == "]":
                        stream.take("]")
                        break
                    stream.take(",")
        if stream.peek() != "}":
            stream.take(",")
    stream.take("}")
    if stream.peek() != "":
        raise ProfileError(f"{name}: not a readable profile (text after the JSON)")
    if not seen:
        raise not_chrome


def profile_of(events: Iterable[object], name: str = "") -> RuntimeProfile:
    """A profile from Chrome trace events (the regions', compiles' and profiler's), read
    one at a time: memory is held by the open regions and :data:`WINDOW`, not the events."""
    tally = _Tally(name)
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "X":
            tally.add(e)
    return tally.settle()


class _Open:
    """A region or compile not yet closed on its thread, and the time of its children."""

    __slots__ = ("title", "start", "end", "dur", "inner")

    def __init__(self, title: str, start: float, end: float, dur: float) -> None:
        self.title, self.start, self.end, self.dur = title, start, end, dur
        self.inner = 0.0


class _Thread:
    __slots__ = ("stack", "compiles_open", "last")

    def __init__(self) -> None:
        self.stack: list[_Open] = []
        self.compiles_open = 0
        self.last: tuple[float, float] | None = None  # the last event nested, by order


class _Tally:
    """Each region's figures, added up as events come."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.profile = RuntimeProfile(path=name)
        self.threads: dict[tuple[object, object], int] = {}
        self.state: list[_Thread] = []
        self.window: list[tuple[float, float, int, int, float, str]] = []
        self.titles: dict[str, str] = {}
        self.seq = 0
        self.calls = 0
        self.open = 0  # regions and compiles open, on all threads
        self.origin: float | None = None
        self.span: tuple[float, float] | None = None  # of the regions and compiles

    def refuse(self, why: str) -> ProfileError:
        return ProfileError(f"{self.name}: {why}: not read")

    def add(self, e: dict[str, object]) -> None:
        title, ts, dur = e.get("name"), e.get("ts"), e.get("dur")
        if not isinstance(title, str) or not _number(ts) or not _number(dur):
            return
        try:
            start, length = float(ts), float(dur)
        except OverflowError:  # an integer past any float
            raise self.refuse("a time that is not a finite number") from None
        if not (math.isfinite(start) and math.isfinite(length)):
            raise self.refuse("a time that is not a finite number")
        if length < 0:
            return
        if title.startswith(PROFILER):
            self.profile.profiled_us = max(self.profile.profiled_us, length)
            self.origin = start if self.origin is None else min(self.origin, start)
            return
        if not (title.startswith(REGION) or title in COMPILES):
            return
        key = (e.get("pid"), e.get("tid"))
        if not all(k is None or isinstance(k, (str, int, float)) for k in key):
            raise self.refuse("an event's pid or tid is not a number or a name")
        if len(title) > MAX_NAME or any(isinstance(k, str) and len(k) > MAX_NAME for k in key):
            raise self.refuse(f"a region or thread named in more than {MAX_NAME} characters")
        thread = self.threads.get(key)
        if thread is None:
            if len(self.threads) >= MAX_THREADS:
                raise self.refuse(f"regions on more than {MAX_THREADS} threads")
            thread = self.threads[key] = len(self.state)
            self.state.append(_Thread())
        end = start + length
        last = self.state[thread].last
        if last is not None and (start, -end) < last:
            raise self.refuse(f"events of a thread more than {WINDOW} apart out of order")
        title = self.titles.setdefault(title, title)
        if len(self.titles) > MAX_REGIONS:
            raise self.refuse(f"more than {MAX_REGIONS} compiled regions")
        low, high = self.span or (start, end)
        self.span = (min(low, start), max(high, end))
        self.seq += 1
        heapq.heappush(self.window, (start, -end, self.seq, thread, length, title))
        if len(self.window) > WINDOW:
            self._nest(heapq.heappop(self.window))

    def _nest(self, item: tuple[float, float, int, int, float, str]) -> None:
        start, neg_end, _seq, index, dur, title = item
        thread = self.state[index]
        thread.last = (start, neg_end)
        self._close(thread, start)
        thread.stack.append(_Open(title, start, -neg_end, dur))
        if title in COMPILES:
            thread.compiles_open += 1
        self.open += 1
        if self.open > MAX_DEPTH:
            raise self.refuse(f"regions nested more than {MAX_DEPTH} deep (all threads)")

    def _close(self, thread: _Thread, upto: float) -> None:
        stack = thread.stack
        while stack and stack[-1].end <= upto:
            done = stack.pop()
            self.open -= 1
            if stack:
                stack[-1].inner += done.dur
            if done.title in COMPILES:
                self.profile.compiles += 1
                thread.compiles_open -= 1
                if not thread.compiles_open:  # a compile inside a compile: once
                    self.profile.compiling_us += done.dur
                continue
            self.calls += 1
            if self.calls > MAX_CALLS:
                raise self.refuse(
                    f"more than {MAX_CALLS} calls of compiled regions; profile a window of "
                    "the run (run --runtime --steps FIRST:LAST)"
                )
            cid = done.title[len(REGION) :].strip()
            region = self.profile.regions.get(cid)
            if region is None:
                region = RegionRuns(cid, first_us=done.start, last_us=done.start)
                self.profile.regions[cid] = region
            region.calls += 1
            region.total_us += done.dur
            region._own.append(max(done.dur - done.inner, 0.0))
            region.first_us = min(region.first_us, done.start)
            region.last_us = max(region.last_us, done.start)

    def settle(self) -> RuntimeProfile:
        while self.window:
            self._nest(heapq.heappop(self.window))
        for thread in self.state:
            self._close(thread, math.inf)
        profile = self.profile
        base = self.origin if self.origin is not None else 0.0
        for region in profile.regions.values():
            region._settle(base)
        profile.compiled_us = sum(r.own_us for r in profile.regions.values())
        if not profile.profiled_us and self.span is not None:
            profile.profiled_us = self.span[1] - self.span[0]
        figures = [profile.profiled_us, profile.compiled_us, profile.compiling_us]
        figures += [r.total_us for r in profile.regions.values()]
        if not all(math.isfinite(f) for f in figures):
            raise self.refuse("times too large to add up")
        return profile


def _number(value: object) -> TypeGuard[float]:
    """A JSON number (not a bool, not NaN)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def meta_file(path: Path) -> Path:
    """Where the meta file of the profile at ``path`` is (``profile-<pid>.meta.json``)."""
    return path.with_name(path.name.split(".", 1)[0] + ".meta.json")


def _read_meta(profile: RuntimeProfile, path: Path, root: str) -> None:
    """What the meta file beside a profile says: mode, process, rank, window.  None is
    fine (the profile is then no process's); one that leads out of the folder, or is not
    a file, or too long for one, makes the profile unread."""
    meta_path = meta_file(path)
    if not os.path.lexists(meta_path):
        return
    why = refusal(meta_path, root)
    raw = b""
    if why is None:
        try:
            with open(meta_path, "rb") as f:
                raw = f.read(MAX_META_BYTES + 1)
        except OSError:
            why = "cannot be read"
        else:
            if len(raw) > MAX_META_BYTES:
                why = f"more than {MAX_META_BYTES >> 10} kB"
    if why is not None:
        raise ProfileError(f"{meta_path.name}: not read: {why or 'a folder'}")
    try:
        meta = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return
    if not isinstance(meta, dict):
        return
    if meta.get("mode") in ("compiled", "eager"):
        profile.mode = meta["mode"]
    wall = meta.get("wall_s")
    if _number(wall) and 0 <= wall < 1e12:  # seconds: a number past any float is none
        profile.wall_s = float(wall)
    pid = meta.get("pid")
    if isinstance(pid, int) and not isinstance(pid, bool):
        profile.pid = pid
    rank = meta.get("rank")
    if isinstance(rank, str) and rank.isdigit() and len(rank) < 10:
        profile.rank = int(rank)
    elif isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0:
        profile.rank = rank
    steps = meta.get("steps")
    if (
        isinstance(steps, list)
        and len(steps) == 2
        and all(isinstance(s, int) and not isinstance(s, bool) for s in steps)
    ):
        profile.steps = (steps[0], steps[1])


_PROFILE_NAME = re.compile(r"profile-.*\.json(\.gz)?\Z", re.DOTALL)


def profile_files(folder: Path, root: str | None = None) -> tuple[list[Path], list[str]]:
    """The profiles in ``folder`` (a trace folder's ``runtime/``) that may be read, and a
    line for each one refused: an entry whose real path is outside ``root`` (the real path
    of the folder the user named; ``folder``'s parent when None), or not a regular file."""
    root = real_root(folder.parent) if root is None else root
    if not os.path.lexists(folder):
        return [], []
    why = refusal(folder, root)
    if why:
        return [], [f"{folder.name}: not read: {why}"]
    if why is None:  # a file named runtime
        return [], []
    try:
        listing = list_folder(folder, root)
    except OSError as e:
        return [], [f"{folder.name}: cannot be listed ({e.strerror or e})"]
    wanted = [p for p in listing.files if _PROFILE_NAME.match(p.name)]
    problems = [
        f"{entry.name}: not read: {reason}"
        for entry, reason in listing.refused
        if _PROFILE_NAME.match(entry.name) and not entry.name.endswith(".meta.json")
    ]
    return sorted(p for p in wanted if not p.name.endswith(".meta.json")), problems


def read_profiles(folder: Path) -> tuple[list[RuntimeProfile], list[str]]:
    """Every profile of a folder (a trace folder's ``runtime/``: that trace folder is the
    one the user named), and a line for each one that could not be read or was refused."""
    root = real_root(folder.parent)
    paths, problems = profile_files(folder, root)
    profiles: list[RuntimeProfile] = []
    regions = 0
    for index, path in enumerate(paths):
        if index >= MAX_PROFILES or regions > MAX_FOLDER_REGIONS:
            problems.append(
                f"{len(paths) - index} more profiles not read: a folder's profiles are read up "
                f"to {MAX_PROFILES} files or {MAX_FOLDER_REGIONS} compile ids in all"
            )
            break
        try:
            profiles.append(read_profile(path, root))
        except ProfileError as e:
            problems.append(str(e))
        else:
            regions += len(profiles[-1].regions)
    return profiles, problems


# -- was it worth it ----------------------------------------------------------------------


@dataclass(frozen=True)
class Worth:
    """One compile id, compiled against eager: per-call times (later calls' medians, in
    microseconds), the compile's seconds (from the trace log), and the calls it pays after."""

    compile_id: str
    calls: int
    compiled_us: float
    eager_us: float | None
    compile_s: float | None

    @property
    def saved_per_call_us(self) -> float | None:
        return None if self.eager_us is None else self.eager_us - self.compiled_us

    @property
    def pays_after(self) -> int | None:
        """Calls after which the time saved covers the compile; ``None``: never (no gain)."""
        saved = self.saved_per_call_us
        if saved is None or self.compile_s is None or saved <= 0:
            return None
        return int(-(-self.compile_s * 1e6 // saved))  # ceiling

    @property
    def paid_off(self) -> bool | None:
        n = self.pays_after
        if self.eager_us is None or self.compile_s is None:
            return None
        return n is not None and self.calls >= n


def worth_it(
    compiled: RuntimeProfile,
    eager: RuntimeProfile | None,
    compile_seconds: dict[str, float],
) -> list[Worth]:
    """For each region the compiled run ran: its time per call beside the eager run's, and
    its compile's seconds (``compile_seconds``: compile id -> seconds, from the log)."""
    rows = []
    for cid, region in sorted(compiled.regions.items(), key=lambda kv: _id_order(kv[0])):
        other = eager.regions.get(cid) if eager is not None else None
        rows.append(
            Worth(
                compile_id=cid,
                calls=region.calls,
                compiled_us=region.later_median_us,
                eager_us=other.later_median_us if other is not None else None,
                compile_s=compile_seconds.get(cid),
            )
        )
    return rows


def _id_order(cid: str) -> tuple[int, ...]:
    parts = []
    for piece in cid.replace("/", " ").replace("_", " ").split():
        parts.append(int(piece) if piece.isdigit() else -1)
    return tuple(parts)


def comparable(compiled: RuntimeProfile, eager: RuntimeProfile) -> list[str]:
    """Why the two runs may not compare: different windows, regions only one side ran,
    calls that differ (another number of steps or inputs)."""
    notes = []
    if compiled.steps != eager.steps:
        notes.append(f"the runs profiled different steps ({compiled.steps} and {eager.steps})")
    only = sorted(set(compiled.regions) ^ set(eager.regions), key=_id_order)
    if only:
        notes.append("regions only one run ran: " + ", ".join(only[:10]))
    differ = [
        cid
        for cid in sorted(set(compiled.regions) & set(eager.regions), key=_id_order)
        if compiled.regions[cid].calls != eager.regions[cid].calls
    ]
    if differ:
        notes.append("regions called a different number of times: " + ", ".join(differ[:10]))
    return notes


#: Fields of torch's Chrome trace that name the machine, not the run: the host, and the
#: file the profiler first wrote (a path of the machine).
_MACHINE_FIELDS = re.compile(r'"(host_name|traceName)": "(?:[^"\\]|\\.)*"')


def profile_lines(profile: RuntimeProfile, shown: Callable[[str], str]) -> Iterator[str]:
    """The profile's Chrome trace, line by line, each as ``shown`` makes it (paths
    rewritten), the host's name and the first file's path left out: a page's download.

    At most :data:`MAX_PROFILE_BYTES` are copied, a line at most :data:`MAX_EVENT_BYTES`
    at a time: a longer line (a trace written on one line) is broken after an event's
    ``},`` (a newline between events is JSON's blank), so memory stays bounded."""

    def masked(m: re.Match[str]) -> str:
        return f'"{m[1]}": "{"host" if m[1] == "host_name" else profile.path}"'

    def line_of(text: str) -> str:
        return shown(_MACHINE_FIELDS.sub(masked, text) if '": "' in text else text)

    opener = gzip.open if profile.file.endswith(".gz") else open
    copied = 0
    rest = ""
    try:
        with opener(profile.file, "rt", encoding="utf-8", errors="replace") as f:
            while copied <= MAX_PROFILE_BYTES:
                piece = f.readline(MAX_EVENT_BYTES)
                if not piece:
                    break
                copied += len(piece)
                text = rest + piece
                rest = ""
                if not text.endswith("\n"):
                    cut = text.rfind("},")
                    if cut > 0 and len(text) >= MAX_EVENT_BYTES:
                        text, rest = text[: cut + 2] + "\n", text[cut + 2 :].lstrip()
                    elif len(text) < 2 * MAX_EVENT_BYTES:
                        rest = text
                        continue
                yield line_of(text)
            if rest:
                yield line_of(rest)
    except (OSError, EOFError, zlib.error):
        return


# -- a trace's profiles ---------------------------------------------------------------------


def region_key(frame_id: object, frame_compile_id: object, ca_id: object = None) -> str:
    """The name torch gives a compile id's region: ``0/1``, ``!2/0/1`` (no attempt)."""
    key = f"{frame_id}/{frame_compile_id}"
    return key if ca_id is None else f"!{ca_id}/{key}"


class RankLike(Protocol):
    """A rank's log as profiles are matched to it: its rank number and process ids."""

    @property
    def rank(self) -> int | None: ...

    @property
    def pids(self) -> Sequence[int]: ...


def _claims(p: RuntimeProfile, log: RankLike) -> bool:
    """Whether compiled profile ``p`` may be of ``log``'s process: its pid is one of the
    log's, and the rank its meta names (if any) is the log's."""
    return p.pid in log.pids and (p.rank is None or log.rank is None or p.rank == log.rank)


@dataclass(frozen=True)
class _Claims:
    """Which compiled profile is each log's (by index), and each group of profiles and
    logs that claim one another ambiguously: none of its profiles is shown."""

    compiled: dict[int, RuntimeProfile]
    tangles: list[tuple[list[RuntimeProfile], list[int]]]


def _compiled_claims(profiles: Sequence[RuntimeProfile], logs: Sequence[RankLike]) -> _Claims:
    by_pid: dict[int, list[int]] = {}
    for j, log in enumerate(logs):
        for pid in dict.fromkeys(log.pids):
            by_pid.setdefault(pid, []).append(j)
    runs = [p for p in profiles if p.mode == "compiled" and p.pid is not None]
    group = list(range(len(runs) + len(logs)))  # profiles first, then logs: union-find

    def top(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    claimed = set()
    for i, p in enumerate(runs):
        for j in by_pid.get(p.pid, []) if p.pid is not None else []:
            if _claims(p, logs[j]):
                group[top(i)] = top(len(runs) + j)
                claimed.add(i)
    members: dict[int, tuple[list[RuntimeProfile], list[int]]] = {}
    for i in claimed:
        members.setdefault(top(i), ([], []))[0].append(runs[i])
    for j in range(len(logs)):
        if top(len(runs) + j) in members:
            members[top(len(runs) + j)][1].append(j)
    compiled, tangles = {}, []
    for found, owners in members.values():
        if len(found) == 1 and len(owners) == 1:
            compiled[owners[0]] = found[0]
        else:
            tangles.append((found, owners))
    return _Claims(compiled, tangles)


def _eager_runs(
    profiles: Sequence[RuntimeProfile], logs: Sequence[RankLike], log: RankLike
) -> list[RuntimeProfile]:
    """The eager runs that claim ``log``: those naming its rank (a single log's: the only
    one, whatever it names)."""
    runs = [p for p in profiles if p.mode == "eager"]
    if len(logs) == 1:
        same = [p for p in runs if p.rank == log.rank]
        return same or (runs if len(runs) == 1 else [])
    return [p for p in runs if p.rank is not None and p.rank == log.rank]


def rank_profiles(
    profiles: Sequence[RuntimeProfile], logs: Sequence[RankLike], log: RankLike
) -> tuple[RuntimeProfile | None, RuntimeProfile | None]:
    """``log``'s compiled profile (its process's, by pid and the rank the profile's meta
    names) and the eager run's of its rank (or the only one, for a single log).

    A profile two logs could claim (one pid on two machines, no rank named), or one of
    two claiming one log, is shown for none of them (:func:`profile_claims` says so): one
    rank's figures are never shown as another's."""
    index = next((j for j, other in enumerate(logs) if other is log), None)
    if index is None:
        logs, index = [*logs, log], len(logs)
    compiled = _compiled_claims(profiles, logs).compiled.get(index)
    eager = _eager_runs(profiles, logs, log)
    return compiled, eager[0] if len(eager) == 1 else None


def unshown_claims(
    profiles: Sequence[RuntimeProfile], logs: Sequence[RankLike], log: RankLike
) -> bool:
    """Whether a profile that claims ``log``'s process or eager run is left unshown,
    because another claims it too (:func:`profile_claims` names them)."""
    index = next((j for j, other in enumerate(logs) if other is log), None)
    tangled = any(index in owners for _found, owners in _compiled_claims(profiles, logs).tangles)
    return tangled or len(_eager_runs(profiles, logs, log)) > 1


def _who(profiles: Sequence[RuntimeProfile]) -> str:
    names = ", ".join(p.path for p in profiles[:3]) + (" …" if len(profiles) > 3 else "")
    ranks = sorted({p.rank for p in profiles if p.rank is not None})
    named = f"naming rank {', '.join(map(str, ranks))}" if ranks else "naming no rank"
    return f"{names} ({named})"


def profile_claims(profiles: Sequence[RuntimeProfile], logs: Sequence[RankLike]) -> list[str]:
    """A line for each group of profiles left unshown because they claim one rank's log
    together, or one claims several ranks' logs (a build's warnings)."""
    lines = []
    for found, owners in _compiled_claims(profiles, logs).tangles:
        ranks = sorted({logs[j].rank for j in owners}, key=lambda r: -1 if r is None else r)
        which = ", ".join("?" if r is None else str(r) for r in ranks)
        pids = ", ".join(sorted({str(p.pid) for p in found}))
        lines.append(
            f"{_who(found)} and the logs of rank {which} share process id {pids} (one process "
            "id on two machines?): which profile is which rank's cannot be told, so none is "
            "shown for these ranks"
        )
    said = set()
    for log in logs:
        found = _eager_runs(profiles, logs, log)
        if len(found) > 1 and log.rank not in said:
            said.add(log.rank)
            lines.append(
                f"{_who(found)}: eager runs that all claim rank "
                f"{'?' if log.rank is None else log.rank}: none of them is shown"
            )
    return lines
