"""Where each compile spent its time and when it ran: the numbers behind the charts.

Two analyses per rank: :func:`compile_time_rows` splits each compile's time into
stages (a stacked bar per compile), :func:`timeline_spans` says when each compile
ran (a Gantt chart, one row per frame).  Pages draw them and show them as tables;
both read the same rows, so the picture and the table cannot disagree.

Timings come from ``compilation_metrics`` records, else from the chromium events'
B/E pairs.  Log values are untrusted: a value that is not a finite, non-negative
number of plausible size (infinite, NaN, subnormal, ``1e308``, a 400-digit integer)
counts as missing, so nothing here raises on it and every sum stays finite.
"""

from __future__ import annotations

import math
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..compile_id import CompileId
from ..kept import Kept
from ..model import ChromiumEvent, Compile, RankTrace
from ..reader import read_payloads

#: The stages a compile's time is split into, outermost first (each metric includes the next).
STAGES: tuple[str, ...] = ("Dynamo", "AOT autograd", "Inductor", "Code generation", "Backward")

#: Nested timings: (seconds key, microseconds key) for each forward stage, outermost first.
_LEVEL_KEYS: tuple[tuple[str, str], ...] = (
    ("entire_frame_compile_time_s", "dynamo_cumulative_compile_time_us"),
    ("backend_compile_time_s", "aot_autograd_cumulative_compile_time_us"),
    ("inductor_compile_time_s", "inductor_cumulative_compile_time_us"),
    ("code_gen_time_s", "inductor_code_gen_cumulative_compile_time_us"),
)

#: Beyond these, bars and timeline rows are aggregated so a chart stays readable and small.
MAX_BARS = 40
MAX_TIMELINE_ROWS = 30

#: A duration longer than this (about 32 years) is a corrupt record, not a slow compile;
#: the bound keeps every sum of durations finite.
MAX_SECONDS = 1e9
#: Timestamps past this (microseconds; some 31,000 years after the epoch) are corrupt too.
MAX_TIMESTAMP_US = 1e18


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class CompileTimeRow:
    """One bar: a compile's time per stage in seconds (or several compiles', aggregated)."""

    label: str  # "[0/0]", or "37 more compiles" for an aggregate
    name: str | None  # the compiled function's co_name
    stages: tuple[float, ...]  # seconds, one per STAGES entry, exclusive (they add up)
    source: Literal["metrics", "events", "aggregate"]
    compiles: int = 1

    @property
    def total(self) -> float:
        return sum(self.stages)

    @property
    def forward(self) -> float:
        """Time inside the frame's compilation (everything but the lazy backward compile)."""
        return sum(self.stages[:4])


@dataclass(frozen=True)
class TimelineSpan:
    """When one compile ran, in seconds since the rank's first compile started."""

    row: str  # the frame it belongs to: "[0/*]" (all recompiles of frame 0 share a row)
    label: str  # the compile: "[0/3]"
    name: str | None
    kind: Literal["forward", "backward"]
    start: float
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class TimelineRow:
    """One row of the timeline: a frame, its co_name and its spans (or several frames merged)."""

    label: str
    name: str | None
    spans: tuple[TimelineSpan, ...]
    frames: int = 1

    @property
    def busy(self) -> float:
        return sum(s.duration for s in self.spans)


# --------------------------------------------------------------------------- analyses


def compile_time_rows(rank: RankTrace) -> list[CompileTimeRow]:
    """One row per compile that logged any timing, in log order.

    Compilation metrics nest (entire frame ⊇ backend ⊇ Inductor ⊇ code
    generation), so each stage is its level minus the next known level; the
    backward graph, compiled lazily at the first ``backward()``, comes from
    ``bwd_compilation_metrics``.  Compiles whose metrics hold no timing fall
    back to the chromium events' B/E pairs of the same names.
    """
    events = _event_spans(rank)
    rows: list[CompileTimeRow] = []
    for compile_ in rank.compiles:
        levels = _metric_levels(compile_)
        source: Literal["metrics", "events"] = "metrics"
        spans = events.get(id(compile_))
        if all(v is None for v in levels) and spans is not None:
            levels = _event_levels(spans)
            source = "events"
        backward = _metric_backward(compile_)
        if backward is None and spans is not None:
            backward = _event_backward(spans)
        if all(v is None for v in levels) and not backward:
            continue
        stages = (*_exclusive(levels), max(0.0, backward or 0.0))
        rows.append(CompileTimeRow(compile_.label, _co_name(compile_), stages, source))
    return rows


def used_stages(rows: Sequence[CompileTimeRow]) -> list[int]:
    """Indexes of the stages some row spent time in: the legend and table columns to show."""
    return [i for i in range(len(STAGES)) if any(r.stages[i] > 0 for r in rows)] or [0]


def bounded_rows(rows: Sequence[CompileTimeRow], limit: int = MAX_BARS) -> list[CompileTimeRow]:
    """The rows to draw: all, or the slowest ``limit - 1`` (in log order) and the rest summed."""
    if len(rows) <= limit:
        return list(rows)
    keep = set(sorted(range(len(rows)), key=lambda i: -rows[i].total)[: limit - 1])
    kept = [r for i, r in enumerate(rows) if i in keep]
    rest = [r for i, r in enumerate(rows) if i not in keep]
    summed = tuple(sum(r.stages[s] for r in rest) for s in range(len(STAGES)))
    count = sum(r.compiles for r in rest)
    kept.append(CompileTimeRow(f"{count} more compiles", None, summed, "aggregate", count))
    return kept


def timeline_spans(rank: RankTrace) -> list[TimelineSpan]:
    """When each compile ran, from chromium events (else metrics' start time), ordered by start.

    The forward span is the ``entire_frame_compile`` pair (``dynamo`` if that
    is missing, ``inductor_compile`` for AOT Inductor, which has no frame);
    backward spans are Inductor compiles outside it.
    """
    events = _event_spans(rank)
    raw: list[tuple[Compile, Literal["forward", "backward"], float, float]] = []
    for compile_ in rank.compiles:
        spans = events.get(id(compile_))
        forward = _forward_windows(spans) if spans is not None else []
        if not forward:
            window = _metric_window(compile_)
            forward = [window] if window is not None else []
        raw.extend((compile_, "forward", s, e) for s, e in forward)
        if spans is not None:
            outside = _outside(_inductor_spans(spans, backward=None), forward)
            raw.extend((compile_, "backward", s, e) for s, e in outside)
    if not raw:
        return []
    origin = min(start for _, _, start, _ in raw)
    out = [
        TimelineSpan(
            _frame_row(c.id), c.label, _co_name(c), kind, (s - origin) / 1e6, (e - origin) / 1e6
        )
        for c, kind, s, e in raw
    ]
    out.sort(key=lambda span: (span.start, span.end))
    return out


def timeline_rows(
    spans: Sequence[TimelineSpan], limit: int = MAX_TIMELINE_ROWS
) -> list[TimelineRow]:
    """Spans grouped by frame, in order of first start; past ``limit`` the least busy merge."""
    grouped: dict[str, list[TimelineSpan]] = {}
    for span in spans:
        grouped.setdefault(span.row, []).append(span)
    rows = [
        TimelineRow(key, next((s.name for s in group if s.name), None), tuple(group))
        for key, group in grouped.items()
    ]
    if len(rows) <= limit:
        return rows
    keep = set(sorted(range(len(rows)), key=lambda i: -rows[i].busy)[: limit - 1])
    kept = [r for i, r in enumerate(rows) if i in keep]
    rest = [r for i, r in enumerate(rows) if i not in keep]
    merged = tuple(sorted((s for r in rest for s in r.spans), key=lambda s: s.start))
    kept.append(TimelineRow(f"{len(rest)} more frames", None, merged, len(rest)))
    return kept


# --------------------------------------------------------------------------- log values


def plausible(value: Any, limit: float = MAX_SECONDS) -> float | None:
    """A non-negative number up to ``limit``, or None for anything else a log may hold.

    The one test of a logged duration or time for every analysis (here, in
    :mod:`.phases` and the page views), so a value is either shown everywhere or
    missing everywhere.  ``limit`` must be finite: it is what keeps ``float()`` safe.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and not 0 <= value <= limit:
        return None  # float() of a 400-digit integer raises
    number = float(value)
    if not (math.isfinite(number) and 0 <= number <= limit) or 0 < number < sys.float_info.min:
        return None  # subnormals are no measurement: they only make axes underflow
    return number


def _seconds(data: dict[str, Any], seconds_key: str, micros_key: str) -> float | None:
    """A duration in seconds, from ``seconds_key`` or else ``micros_key`` (microseconds)."""
    value = plausible(data.get(seconds_key), MAX_SECONDS)
    return _micros_as_seconds(data.get(micros_key)) if value is None else value


def _micros_as_seconds(value: Any) -> float | None:
    micros = plausible(value, MAX_SECONDS * 1e6)
    return None if micros is None else micros / 1e6


def _metric_levels(compile_: Compile) -> list[float | None]:
    """Seconds at each nesting level, summed over the compile's compilation_metrics records."""
    levels: list[float | None] = [None] * len(_LEVEL_KEYS)
    for metrics in compile_.compilation_metrics:
        data = metrics.data if isinstance(metrics.data, dict) else {}
        for i, (seconds_key, micros_key) in enumerate(_LEVEL_KEYS):
            value = _seconds(data, seconds_key, micros_key)
            if value is not None:
                levels[i] = (levels[i] or 0.0) + value
    return levels


def _metric_backward(compile_: Compile) -> float | None:
    total: float | None = None
    for metrics in compile_.metrics:
        if metrics.event != "bwd_compilation_metrics" or not isinstance(metrics.data, dict):
            continue
        data = metrics.data
        value = _micros_as_seconds(data.get("backward_cumulative_compile_time_us"))
        if value is None:
            value = _seconds(data, "inductor_compile_time_s", "inductor_cumulative_compile_time_us")
        if value is not None:
            total = (total or 0.0) + value
    return total


def _metric_window(compile_: Compile) -> tuple[float, float] | None:
    """(start µs, end µs) of the frame's compile from its metrics, for logs without events."""
    for metrics in compile_.compilation_metrics:
        data = metrics.data if isinstance(metrics.data, dict) else {}
        start = plausible(data.get("start_time_us"), MAX_TIMESTAMP_US)
        if start is None:
            seconds = plausible(data.get("start_time"), MAX_TIMESTAMP_US / 1e6)
            start = None if seconds is None else seconds * 1e6
        end = plausible(data.get("end_time_us"), MAX_TIMESTAMP_US)
        if end is None and start is not None:
            levels = _metric_levels(compile_)
            end = start + levels[0] * 1e6 if levels[0] is not None else None
        if start is not None and end is not None and end >= start:
            return start, end
    return None


def _exclusive(levels: Sequence[float | None]) -> tuple[float, ...]:
    """Nested levels to exclusive stage times; a missing level's time stays with the one outside."""
    out = [0.0] * len(levels)
    outer: int | None = None
    for i, value in enumerate(levels):
        if value is None:
            continue
        if outer is not None:
            value = min(value, levels[outer] or 0.0)
            out[outer] -= value
        out[i] = value
        outer = i
    return tuple(max(0.0, v) for v in out)


def _co_name(compile_: Compile) -> str | None:
    for metrics in compile_.compilation_metrics:
        name = metrics.data.get("co_name") if isinstance(metrics.data, dict) else None
        if isinstance(name, str) and name:
            return name
    return None


def _frame_row(compile_id: CompileId) -> str:
    """All compiles of one frame share a timeline row: ``[0/3]`` → ``[0/*]``."""
    if compile_id.is_unknown:
        return str(compile_id)
    head = "" if compile_id.compiled_autograd_id is None else f"!{compile_id.compiled_autograd_id}/"
    frame = "-" if compile_id.frame_id is None else str(compile_id.frame_id)
    return f"[{head}{frame}/*]"


# --------------------------------------------------------------------------- chromium events

_WANTED = frozenset(
    {
        "dynamo",
        "entire_frame_compile",
        "backend_compile",
        "inductor_compile",
        "compile_fx_inner",
        "code_gen",
    }
)

Span = tuple[float, float]


@dataclass
class _Spans:
    """B/E-paired chromium events of one compile: event name → [(start µs, end µs, E args)]."""

    by_name: dict[str, list[tuple[float, float, dict[str, Any]]]] = field(
        default_factory=lambda: defaultdict(list)
    )


# The stage spans, the overview's phase times: both from one reading of a rank's events.
_cache: dict[int, tuple[RankTrace, dict[int, _Spans]]] = {}


def _event_spans(rank: RankTrace) -> dict[int, _Spans]:
    cached = _cache.get(id(rank))
    if cached is not None and cached[0] is rank:
        return cached[1]
    return read_events(rank)


def read_events(rank: RankTrace) -> dict[int, _Spans]:
    """One reading of a rank's chromium events (read from its log a piece at a time, not one
    read each) for both analyses: the B/E pairs of the stage events, by ``id()`` of the
    compile their E event belongs to (returned), and torch's timers summed
    (:func:`remember_phase_times`).  The timeline download's reading does both too
    (:class:`EventReading`): after it, nothing is read again.
    """
    reading = EventReading(rank)
    for event, parsed in _parsed_events(rank):
        reading.add(event, parsed)
    return reading.done()


class EventReading:
    """What one pass over a rank's chromium events gives both analyses: each event goes
    to :meth:`add` with its payload as a dict, in log order; :meth:`done` keeps the stage
    spans (for :func:`_event_spans`) and the timers (:func:`remember_phase_times`).

    Pairs are matched per frame (ignoring the attempt), since a restarted
    frame opens ``entire_frame_compile`` in ``[1/0]`` and closes it in ``[1/0_1]``.
    """

    def __init__(self, rank: RankTrace) -> None:
        self.rank = rank
        self._owners = _compile_lookup(rank)
        self._clock = PhaseClock()
        self._open: dict[tuple[str, CompileId], list[float]] = defaultdict(list)
        self._spans: dict[int, _Spans] = {}

    def add(self, event: ChromiumEvent, parsed: dict[str, Any]) -> None:
        self._clock.add(parsed)
        decoded = _decode(parsed)
        if decoded is None:
            return
        name, phase, ts, args = decoded
        key = (name, event.compile_id.frame)
        if phase == "B":
            self._open[key].append(ts)
            return
        if phase == "E" and self._open[key]:
            start, end = self._open[key].pop(), ts
        elif phase == "X":
            duration = plausible(args.pop("__dur__", None), MAX_SECONDS * 1e6)
            start, end = ts, ts + (duration or 0.0)
        else:
            return
        owner = self._owners(event)
        if owner is None or end < start:
            return
        self._spans.setdefault(id(owner), _Spans()).by_name[name].append((start, end, args))

    def done(self) -> dict[int, _Spans]:
        """The stage spans by ``id()`` of their compile, kept with the timers."""
        if len(_cache) > 16:
            _cache.clear()
        _cache[id(self.rank)] = (self.rank, self._spans)
        remember_phase_times(self.rank, self._clock.times())
        return self._spans


def _parsed_events(rank: RankTrace) -> Iterator[tuple[ChromiumEvent, dict[str, Any]]]:
    """Each readable event with its payload as a dict; a payload that is no JSON object is
    passed over, and a log that can no longer be read ends the reading (no reason to fail a
    build)."""
    events = [e for e in rank.chromium_events if e.readable]
    payloads = read_payloads([e.payload for e in events])
    for event in events:
        try:
            parsed = ChromiumEvent.parse(next(payloads))
        except StopIteration:
            return
        except RecursionError:
            continue
        except Exception:  # noqa: BLE001 - an unreadable log: what was read stands
            return
        if parsed:
            yield event, parsed


def _decode(data: dict[str, Any]) -> tuple[str, str, float, dict[str, Any]] | None:
    name = data.get("name")
    if not isinstance(name, str) or name not in _WANTED:
        return None
    ts = plausible(data.get("ts"), MAX_TIMESTAMP_US)
    phase = data.get("ph")
    if ts is None or phase not in ("B", "E", "X"):
        return None
    args = dict(data["args"]) if isinstance(data.get("args"), dict) else {}
    if phase == "X":
        args["__dur__"] = data.get("dur")
    return name, str(phase), ts, args


def _compile_lookup(rank: RankTrace) -> Callable[[ChromiumEvent], Compile | None]:
    """A function from an event to its compile: the latest one of its id begun before it."""
    by_id: dict[CompileId, list[Compile]] = defaultdict(list)
    for compile_ in rank.compiles:
        by_id[compile_.id].append(compile_)

    def owner(event: ChromiumEvent) -> Compile | None:
        candidates = by_id.get(event.compile_id)
        if not candidates:
            return None
        best = candidates[0]
        for candidate in candidates:
            if candidate.first_line <= event.line:
                best = candidate
        return best

    return owner


def _union(spans: Iterable[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _length(spans: Iterable[Span]) -> float:
    return sum(end - start for start, end in _union(spans))


def _inside(spans: Iterable[Span], windows: Sequence[Span]) -> list[Span]:
    if not windows:
        return list(spans)
    return [(s, e) for s, e in spans if any(ws <= s and e <= we for ws, we in windows)]


def _outside(spans: Iterable[Span], windows: Sequence[Span]) -> list[Span]:
    return _union((s, e) for s, e in spans if not any(ws <= s and e <= we for ws, we in windows))


def _pairs(spans: _Spans, name: str) -> list[Span]:
    return [(s, e) for s, e, _ in spans.by_name.get(name, [])]


def _has_frame(spans: _Spans) -> bool:
    return bool(spans.by_name.get("entire_frame_compile") or spans.by_name.get("dynamo"))


def _forward_windows(spans: _Spans) -> list[Span]:
    for name in ("entire_frame_compile", "dynamo"):
        if spans.by_name.get(name):
            return _union(_pairs(spans, name))
    return _union(_inductor_spans(spans, backward=False))


def _inductor_spans(spans: _Spans, backward: bool | None) -> list[Span]:
    name = "inductor_compile" if spans.by_name.get("inductor_compile") else "compile_fx_inner"
    return [
        (s, e)
        for s, e, args in spans.by_name.get(name, [])
        if backward is None or bool(args.get("is_backward")) == backward
    ]


def _event_levels(spans: _Spans) -> list[float | None]:
    windows = _forward_windows(spans) if _has_frame(spans) else []
    levels: list[float | None] = [_length(windows) / 1e6 if windows else None]
    for name in ("backend_compile", None, "code_gen"):
        pairs = _inductor_spans(spans, backward=None) if name is None else _pairs(spans, name)
        inside = _inside(pairs, windows)
        levels.append(_length(inside) / 1e6 if inside else None)
    return levels


def _event_backward(spans: _Spans) -> float | None:
    if not _has_frame(spans):
        return None  # without a frame there is nothing to be outside of
    outside = _outside(_inductor_spans(spans, backward=None), _forward_windows(spans))
    return _length(outside) / 1e6 if outside else None


# -- torch's timers, summed ---------------------------------------------------------------


@dataclass(frozen=True)
class EventTime:
    name: str
    seconds: float
    count: int


class PhaseClock:
    """Sums chromium timers event by event (see :func:`.phases.chromium_phase_times`)."""

    def __init__(self) -> None:
        self.open_at: dict[tuple[str, str, str], list[float]] = {}
        self.seconds: dict[str, float] = {}
        self.counts: Counter[str] = Counter()

    def add(self, data: dict[str, Any]) -> None:
        name, ph, ts = data.get("name"), data.get("ph"), plausible(data.get("ts"), MAX_TIMESTAMP_US)
        if not isinstance(name, str) or ts is None:
            return
        key = (_thread_key(data.get("pid")), _thread_key(data.get("tid")), name)
        seconds, counts, open_at = self.seconds, self.counts, self.open_at
        if ph == "B":
            open_at.setdefault(key, []).append(ts)
        elif ph == "E" and open_at.get(key):
            start = open_at[key].pop()
            if not open_at[key]:
                seconds[name] = seconds.get(name, 0.0) + max(0.0, (ts - start) / 1e6)
                counts[name] += 1
        elif ph == "X":
            dur = plausible(data.get("dur"), MAX_SECONDS * 1e6)
            if dur is not None:
                seconds[name] = seconds.get(name, 0.0) + dur / 1e6
                counts[name] += 1

    def times(self) -> list[EventTime]:
        top = sorted(self.seconds, key=lambda n: -self.seconds[n])
        return [EventTime(n, self.seconds[n], self.counts[n]) for n in top]


#: Phase times of the ranks whose events were read last: a few lists of names and numbers,
#: kept as the events are read (no work of their own: :func:`read_events` does it).
_PHASE_TIMES: Kept[RankTrace, list[EventTime]] = Kept(lambda rank: [])


def phase_times_of(rank: RankTrace) -> list[EventTime] | None:
    found = _PHASE_TIMES.get(rank)
    return found[0] if found is not None else None


def remember_phase_times(rank: RankTrace, times: list[EventTime]) -> list[EventTime]:
    return _PHASE_TIMES.put(rank, times)


def _thread_key(value: Any) -> str:
    """A pid or tid as a dict key: logs may hold a list or an object there (unhashable)."""
    if value is None or isinstance(value, (str, int, float)):
        return repr(value)
    return type(value).__name__  # corrupt either way: all such threads are one
