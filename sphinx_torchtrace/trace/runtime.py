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
"""

from __future__ import annotations

import gzip
import json
import os
import re
import statistics
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

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
#: A profile larger than this (decompressed) is not read, a warning says so: its events
#: are held in memory while read.  A whole long run is larger: profile a window (--steps).
MAX_PROFILE_BYTES = 256 << 20


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
    """The calls of one compile id's compiled code (times in microseconds)."""

    compile_id: str
    calls: int = 0
    total_us: float = 0.0
    own_us: float = 0.0
    first_us: float = 0.0
    last_us: float = 0.0
    _own: list[float] = field(default_factory=list, repr=False)

    @property
    def median_us(self) -> float:
        return statistics.median(self._own) if self._own else 0.0

    @property
    def first_call_us(self) -> float:
        return self._own[0] if self._own else 0.0

    @property
    def later_median_us(self) -> float:
        """The median own time of the calls after the first (the first pays for warm-up:
        loading the kernels, the first guard checks); the first call's own when alone."""
        later = self._own[1:]
        return statistics.median(later) if later else self.first_call_us


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


@dataclass(frozen=True)
class _Event:
    name: str
    start: float
    end: float
    dur: float  # as torch wrote it: ``end - start`` loses digits at these timestamps


def read_profile(path: Path) -> RuntimeProfile:
    """The profile at ``path`` (``profile-<pid>.json.gz`` or plain JSON) and its meta file."""
    try:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rb") as f:
            raw = f.read(MAX_PROFILE_BYTES + 1)
        if len(raw) > MAX_PROFILE_BYTES:
            raise ProfileError(
                f"{path.name}: more than {MAX_PROFILE_BYTES >> 20} MB of events, more than is "
                "read; profile a window of the run (run --runtime --steps FIRST:LAST)"
            )
        data = json.loads(raw)
    except ProfileError:
        raise
    except (OSError, EOFError, ValueError, UnicodeDecodeError, RecursionError) as e:
        raise ProfileError(f"{path.name}: not a readable profile ({type(e).__name__})") from None
    events = data.get("traceEvents") if isinstance(data, dict) else None
    if not isinstance(events, list):
        raise ProfileError(f"{path.name}: no traceEvents: not a Chrome trace of torch")
    profile = profile_of(events, path.name)
    profile.file = str(path)
    _read_meta(profile, path)
    return profile


def profile_of(events: Iterable[object], name: str = "") -> RuntimeProfile:
    """A profile from Chrome trace events (the regions', compiles' and profiler's)."""
    profile = RuntimeProfile(path=name)
    by_thread: dict[tuple[object, object], list[_Event]] = {}
    origin: float | None = None
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        title, ts, dur = e.get("name"), e.get("ts"), e.get("dur")
        if not isinstance(title, str) or not _number(ts) or not _number(dur) or dur < 0:
            continue
        if title.startswith(PROFILER):
            profile.profiled_us = max(profile.profiled_us, float(dur))
            origin = float(ts) if origin is None else min(origin, float(ts))
        elif title.startswith(REGION) or title in COMPILES:
            key = (e.get("pid"), e.get("tid"))
            by_thread.setdefault(key, []).append(
                _Event(title, float(ts), float(ts) + dur, float(dur))
            )
    base = origin if origin is not None else 0.0
    for thread in by_thread.values():
        _nest(thread, profile, base)
    for region in profile.regions.values():
        region.own_us = sum(region._own)
    profile.compiled_us = sum(r.own_us for r in profile.regions.values())
    if not profile.profiled_us:
        spans = [e for t in by_thread.values() for e in t]
        if spans:
            profile.profiled_us = max(e.end for e in spans) - min(e.start for e in spans)
    return profile


def _nest(events: list[_Event], profile: RuntimeProfile, base: float) -> None:
    """Own time of each region: its duration less the regions and compiles directly in it."""
    events.sort(key=lambda e: (e.start, -e.end))
    stack: list[tuple[_Event, list[float]]] = []  # an event and the time of its children

    def close(upto: float) -> None:
        while stack and stack[-1][0].end <= upto:
            _done(*stack.pop(), profile, base, stack)

    for e in events:
        close(e.start)
        stack.append((e, [0.0]))
    close(float("inf"))


def _done(
    e: _Event,
    inner: list[float],
    profile: RuntimeProfile,
    base: float,
    stack: list[tuple[_Event, list[float]]],
) -> None:
    dur = e.dur
    if stack:
        stack[-1][1][0] += dur
    if e.name in COMPILES:
        profile.compiles += 1
        if not any(s[0].name in COMPILES for s in stack):  # a compile inside a compile: once
            profile.compiling_us += dur
        return
    cid = e.name[len(REGION) :].strip()
    region = profile.regions.setdefault(cid, RegionRuns(cid))
    own = max(dur - inner[0], 0.0)
    region.calls += 1
    region.total_us += dur
    region._own.append(own)
    start = e.start - base
    region.first_us = start if region.calls == 1 else min(region.first_us, start)
    region.last_us = max(region.last_us, start)


def _number(value: object) -> TypeGuard[float]:
    """A finite-or-infinite JSON number (not a bool, not NaN)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _read_meta(profile: RuntimeProfile, path: Path) -> None:
    meta_path = path.with_name(path.name.split(".", 1)[0] + ".meta.json")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(meta, dict):
        return
    if meta.get("mode") in ("compiled", "eager"):
        profile.mode = meta["mode"]
    wall = meta.get("wall_s")
    if _number(wall) and wall >= 0:
        profile.wall_s = float(wall)
    pid = meta.get("pid")
    if isinstance(pid, int) and not isinstance(pid, bool):
        profile.pid = pid
    rank = meta.get("rank")
    if isinstance(rank, str) and rank.isdigit():
        profile.rank = int(rank)
    steps = meta.get("steps")
    if (
        isinstance(steps, list)
        and len(steps) == 2
        and all(isinstance(s, int) and not isinstance(s, bool) for s in steps)
    ):
        profile.steps = (steps[0], steps[1])


def profile_files(folder: Path) -> list[Path]:
    """The profiles in ``folder`` (a trace folder's ``runtime/``): regular files only."""
    if not folder.is_dir() or folder.is_symlink():
        return []
    found = [*folder.glob("profile-*.json.gz"), *folder.glob("profile-*.json")]
    return sorted(
        p for p in found if p.is_file() and not p.is_symlink() and not p.name.endswith(".meta.json")
    )


def read_profiles(folder: Path) -> tuple[list[RuntimeProfile], list[str]]:
    """Every profile of a folder, and a line for each one that could not be read."""
    profiles, problems = [], []
    for path in profile_files(folder):
        try:
            profiles.append(read_profile(path))
        except ProfileError as e:
            problems.append(str(e))
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
    rewritten), the host's name and the first file's path left out: a page's download."""

    def masked(m: re.Match[str]) -> str:
        return f'"{m[1]}": "{"host" if m[1] == "host_name" else profile.path}"'

    opener = gzip.open if profile.file.endswith(".gz") else open
    try:
        with opener(profile.file, "rt", encoding="utf-8", errors="replace") as f:
            for line in f:
                yield shown(_MACHINE_FIELDS.sub(masked, line) if '": "' in line else line)
    except (OSError, EOFError):
        return


# -- a trace's profiles ---------------------------------------------------------------------


def region_key(frame_id: object, frame_compile_id: object, ca_id: object = None) -> str:
    """The name torch gives a compile id's region: ``0/1``, ``!2/0/1`` (no attempt)."""
    key = f"{frame_id}/{frame_compile_id}"
    return key if ca_id is None else f"!{ca_id}/{key}"


def rank_profiles(
    profiles: Sequence[RuntimeProfile], pids: Sequence[int], rank: int | None, ranks: int
) -> tuple[RuntimeProfile | None, RuntimeProfile | None]:
    """A rank's compiled profile (its process's, by pid) and the eager run's of its rank
    (or the only one, for a single log)."""
    compiled = next((p for p in profiles if p.mode == "compiled" and p.pid in pids), None)
    eager_runs = [p for p in profiles if p.mode == "eager"]
    eager = next((p for p in eager_runs if p.rank == rank), None)
    if eager is None and ranks == 1 and len(eager_runs) == 1:
        eager = eager_runs[0]
    return compiled, eager
