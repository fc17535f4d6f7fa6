"""Inline SVG charts made at build time (no plotting library, nothing fetched at view time).

Two pictures per rank: where each compile spent its time (a stacked bar per
compile) and when compiles ran (a Gantt chart, one row per frame).  The
numbers come from pure functions (:func:`compile_time_rows`,
:func:`timeline_spans`) that tests and the text tables share; the SVG comes
from separate rendering functions.  Every piece of trace text in an SVG is
XML-escaped, and every chart has a bounded number of elements however big
the trace is.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .trace import ChromiumEvent, Compile, CompileId, RankTrace

#: The stages a compile's time is split into, outermost first (each metric includes the next).
STAGES: tuple[str, ...] = ("Dynamo", "AOT autograd", "Inductor", "Code generation", "Backward")

#: Fixed fills with relative luminance 0.15-0.21: at least 3:1 against white and furo's dark
#: background alike (WCAG 1.4.11), so one palette serves both themes.
STAGE_COLORS: tuple[str, ...] = ("#4e79a7", "#c7620a", "#2e8540", "#9c5fb5", "#d03f6f")
OTHER_COLOR = "#6b7280"
FORWARD_COLOR = STAGE_COLORS[0]
BACKWARD_COLOR = STAGE_COLORS[4]

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
MAX_BOXES = 600

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


# --------------------------------------------------------------------------- numbers


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


@dataclass
class _Spans:
    """B/E-paired chromium events of one compile: event name → [(start µs, end µs, E args)]."""

    by_name: dict[str, list[tuple[float, float, dict[str, Any]]]] = field(
        default_factory=lambda: defaultdict(list)
    )


def section_enabled(options: Mapping[str, str] | None, key: str = "charts") -> bool:
    """Whether the ``:sections:`` option (comma-separated; absent or empty: all) asks for it."""
    if not options or "sections" not in options:
        return True
    wanted = {s.strip().lower() for s in str(options.get("sections") or "").split(",")} - {""}
    return not wanted or key in wanted or "all" in wanted


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


# --------------------------------------------------------------------------- metrics


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


def _metric_levels(compile_: Compile) -> list[float | None]:
    """Seconds at each nesting level, summed over the compile's compilation_metrics records."""
    levels: list[float | None] = [None] * len(_LEVEL_KEYS)
    for metrics in compile_.compilation_metrics:
        data = metrics.data if isinstance(metrics.data, dict) else {}
        for i, (seconds_key, micros_key) in enumerate(_LEVEL_KEYS):
            value = _number(data.get(seconds_key))
            if value is None:
                micros = _number(data.get(micros_key))
                value = None if micros is None else micros / 1e6
            if value is not None:
                levels[i] = (levels[i] or 0.0) + value
    return levels


def _metric_backward(compile_: Compile) -> float | None:
    total: float | None = None
    for metrics in compile_.metrics:
        if metrics.kind != "bwd_compilation_metrics" or not isinstance(metrics.data, dict):
            continue
        data = metrics.data
        micros = _number(data.get("backward_cumulative_compile_time_us"))
        value = micros / 1e6 if micros is not None else _number(data.get("inductor_compile_time_s"))
        if value is None:
            inductor = _number(data.get("inductor_cumulative_compile_time_us"))
            value = None if inductor is None else inductor / 1e6
        if value is not None:
            total = (total or 0.0) + value
    return total


def _metric_window(compile_: Compile) -> tuple[float, float] | None:
    """(start µs, end µs) of the frame's compile from its metrics, for logs without events."""
    for metrics in compile_.compilation_metrics:
        data = metrics.data if isinstance(metrics.data, dict) else {}
        start = _number(data.get("start_time_us"))
        if start is None:
            seconds = _number(data.get("start_time"))
            start = None if seconds is None else seconds * 1e6
        end = _number(data.get("end_time_us"))
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
    {"dynamo", "entire_frame_compile", "backend_compile", "inductor_compile",
     "compile_fx_inner", "code_gen"}
)
_cache: dict[int, tuple[RankTrace, dict[int, _Spans]]] = {}


def _event_spans(rank: RankTrace) -> dict[int, _Spans]:
    """B/E pairs of the stage events, by ``id()`` of the compile their E event belongs to.

    Pairs are matched per frame (ignoring the attempt), since a restarted
    frame opens ``entire_frame_compile`` in ``[1/0]`` and closes it in ``[1/0_1]``.
    """
    cached = _cache.get(id(rank))
    if cached is not None and cached[0] is rank:
        return cached[1]
    owners = _compile_lookup(rank)
    open_: dict[tuple[str, CompileId], list[float]] = defaultdict(list)
    out: dict[int, _Spans] = {}
    for event in rank.chromium_events:
        decoded = _decode(event)
        if decoded is None:
            continue
        name, phase, ts, args = decoded
        key = (name, event.compile_id.frame)
        if phase == "B":
            open_[key].append(ts)
            continue
        if phase == "E" and open_[key]:
            start, end = open_[key].pop(), ts
        elif phase == "X":
            start, end = ts, ts + (_number(args.pop("__dur__", None)) or 0.0)
        else:
            continue
        owner = owners(event)
        if owner is None or end < start:
            continue
        out.setdefault(id(owner), _Spans()).by_name[name].append((start, end, args))
    if len(_cache) > 16:
        _cache.clear()
    _cache[id(rank)] = (rank, out)
    return out


def _decode(event: ChromiumEvent) -> tuple[str, str, float, dict[str, Any]] | None:
    try:
        data = event.decode()
    except Exception:  # noqa: BLE001 - a payload we cannot read is no reason to fail a build
        return None
    if not data or data.get("name") not in _WANTED:
        return None
    ts = _number(data.get("ts"))
    phase = data.get("ph")
    if ts is None or phase not in ("B", "E", "X"):
        return None
    args = dict(data["args"]) if isinstance(data.get("args"), dict) else {}
    if phase == "X":
        args["__dur__"] = data.get("dur")
    return str(data["name"]), str(phase), ts, args


def _compile_lookup(rank: RankTrace) -> Any:
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


def _union(spans: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _length(spans: Iterable[tuple[float, float]]) -> float:
    return sum(end - start for start, end in _union(spans))


def _inside(spans: Iterable[tuple[float, float]], windows: Sequence[tuple[float, float]]) -> list[
    tuple[float, float]
]:
    if not windows:
        return list(spans)
    return [(s, e) for s, e in spans if any(ws <= s and e <= we for ws, we in windows)]


def _outside(spans: Iterable[tuple[float, float]], windows: Sequence[tuple[float, float]]) -> list[
    tuple[float, float]
]:
    return _union((s, e) for s, e in spans if not any(ws <= s and e <= we for ws, we in windows))


def _pairs(spans: _Spans, name: str) -> list[tuple[float, float]]:
    return [(s, e) for s, e, _ in spans.by_name.get(name, [])]


def _forward_windows(spans: _Spans) -> list[tuple[float, float]]:
    for name in ("entire_frame_compile", "dynamo"):
        if spans.by_name.get(name):
            return _union(_pairs(spans, name))
    return _union(_inductor_spans(spans, backward=False))


def _inductor_spans(spans: _Spans, backward: bool | None) -> list[tuple[float, float]]:
    name = "inductor_compile" if spans.by_name.get("inductor_compile") else "compile_fx_inner"
    return [
        (s, e)
        for s, e, args in spans.by_name.get(name, [])
        if backward is None or bool(args.get("is_backward")) == backward
    ]


def _event_levels(spans: _Spans) -> list[float | None]:
    windows = [] if not (spans.by_name.get("entire_frame_compile") or spans.by_name.get("dynamo")) \
        else _forward_windows(spans)
    levels: list[float | None] = [_length(windows) / 1e6 if windows else None]
    for name in ("backend_compile", None, "code_gen"):
        pairs = _inductor_spans(spans, backward=None) if name is None else _pairs(spans, name)
        inside = _inside(pairs, windows)
        levels.append(_length(inside) / 1e6 if inside else None)
    return levels


def _event_backward(spans: _Spans) -> float | None:
    windows = _forward_windows(spans)
    if not (spans.by_name.get("entire_frame_compile") or spans.by_name.get("dynamo")):
        return None  # without a frame there is nothing to be outside of
    outside = _outside(_inductor_spans(spans, backward=None), windows)
    return _length(outside) / 1e6 if outside else None


# --------------------------------------------------------------------------- SVG

_FONT = 12
_CHAR_WIDTH = 7.0  # average advance of a 12px sans-serif character, for layout only
_WIDTH = 760
_LABEL_WIDTH = 220
_VALUE_WIDTH = 72
_ROW = 22
_BAR = 14


def xml_escape(text: object) -> str:
    """Text safe inside an XML element or a double-quoted attribute, control characters removed."""
    cleaned = _CONTROL.sub("\ufffd", str(text))
    return (
        cleaned.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        .replace('"', "&quot;").replace("'", "&#39;")
    )


def _shorten(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: max(1, chars - 1)] + "…"


def format_seconds(value: float) -> str:
    """Durations as people read them: 18.4 s, 752 ms, 2.4 ms, 95 µs."""
    if value >= 10:
        return f"{value:.1f} s"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 0.01:
        return f"{value * 1000:.0f} ms"
    if value >= 0.001:
        return f"{value * 1000:.1f} ms"
    return f"{value * 1e6:.0f} µs"


def _ticks(maximum: float, target: int = 6) -> list[float]:
    """Round tick values (1, 2, 5 × 10ⁿ) from 0 to at least ``maximum``."""
    if maximum <= 0:
        return [0.0]
    raw = maximum / target
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    count = math.ceil(maximum / step - 1e-9)
    return [i * step for i in range(count + 1)]


def _tick_label(value: float, step: float) -> str:
    if step >= 1 or value >= 1:
        return f"{value:g} s"
    if step >= 0.001:
        return f"{value * 1000:g} ms"
    return f"{value * 1e6:g} µs"


def _svg_open(width: int, height: int, title: str, desc: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="torchtrace-chart" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'aria-label="{xml_escape(title)}" '
        f'style="max-width:100%;height:auto;font-family:inherit" font-size="{_FONT}" '
        f'fill="currentColor">',
        f"<title>{xml_escape(title)}</title>",
        f"<desc>{xml_escape(desc)}</desc>",
    ]


def _legend(entries: Sequence[tuple[str, str]], x: float, y: float) -> list[str]:
    out = ['<g class="legend">']
    for label, color in entries:
        out.append(f'<rect x="{x:.0f}" y="{y - 10:.0f}" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{x + 16:.0f}" y="{y:.0f}">{xml_escape(label)}</text>')
        x += 16 + len(label) * _CHAR_WIDTH + 18
    out.append("</g>")
    return out


def _axis(left: float, width: float, top: float, bottom: float, maximum: float) -> list[str]:
    ticks = _ticks(maximum)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    scale = width / (ticks[-1] or 1.0)
    out = ['<g class="axis">']
    for value in ticks:
        x = left + value * scale
        out.append(
            f'<line x1="{x:.1f}" y1="{top:.0f}" x2="{x:.1f}" y2="{bottom:.0f}" '
            f'stroke="currentColor" stroke-opacity="0.15"/>'
        )
        out.append(
            f'<text x="{x:.1f}" y="{bottom + 15:.0f}" text-anchor="middle">'
            f"{xml_escape(_tick_label(value, step))}</text>"
        )
    out.append(
        f'<line x1="{left:.0f}" y1="{bottom:.0f}" x2="{left + width:.0f}" y2="{bottom:.0f}" '
        f'stroke="currentColor" stroke-opacity="0.6"/>'
    )
    out.append("</g>")
    return out


def _row_label(label: str, name: str | None) -> str:
    text = f"{label} {name}" if name else label
    return _shorten(text, int((_LABEL_WIDTH - 12) / _CHAR_WIDTH))


def compile_time_svg(
    rows: Sequence[CompileTimeRow], title: str = "Compile time per compile"
) -> str:
    """A stacked horizontal bar per row; past MAX_BARS rows, see :func:`bounded_rows`."""
    rows = bounded_rows(rows)
    used = used_stages(rows)
    top = 30
    bottom = top + _ROW * max(1, len(rows))
    height = bottom + 30
    plot = _WIDTH - _LABEL_WIDTH - _VALUE_WIDTH
    maximum = max((r.total for r in rows), default=0.0)
    ticks = _ticks(maximum)
    scale = plot / (ticks[-1] or 1.0)
    desc = "; ".join(
        f"{r.label}: {format_seconds(r.total)}" for r in rows[:MAX_BARS]
    ) or "no compile logged its time"
    out = _svg_open(_WIDTH, height, title, desc)
    out += _legend([(STAGES[i], STAGE_COLORS[i]) for i in used], _LABEL_WIDTH, 16)
    out += _axis(_LABEL_WIDTH, plot, top, bottom, maximum)
    for index, row in enumerate(rows):
        y = top + index * _ROW
        tip = f"{row.label}" + (f" {row.name}" if row.name else "") + ": " + ", ".join(
            f"{STAGES[i]} {format_seconds(row.stages[i])}" for i in used if row.stages[i] > 0
        ) + f"; total {format_seconds(row.total)}"
        out.append(f'<g class="bar"><title>{xml_escape(tip)}</title>')
        out.append(
            f'<text x="{_LABEL_WIDTH - 8}" y="{y + 15}" text-anchor="end">'
            f"{xml_escape(_row_label(row.label, row.name))}</text>"
        )
        x = float(_LABEL_WIDTH)
        for i in used:
            width = row.stages[i] * scale
            if width <= 0:
                continue
            fill = STAGE_COLORS[i]
            drawn = width - 1 if width > 3 else width  # a hairline gap tells segments apart
            out.append(
                f'<rect x="{x:.1f}" y="{y + 4}" width="{drawn:.1f}" height="{_BAR}" fill="{fill}"/>'
            )
            x += width
        out.append(
            f'<text x="{x + 6:.1f}" y="{y + 15}">{xml_escape(format_seconds(row.total))}</text>'
        )
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def timeline_svg(
    spans: Sequence[TimelineSpan], title: str = "When each compile ran"
) -> str:
    """A Gantt chart: one row per frame, a box per compile, on a shared time axis."""
    rows = timeline_rows(spans)
    top = 30
    bottom = top + _ROW * max(1, len(rows))
    height = bottom + 30
    plot = _WIDTH - _LABEL_WIDTH - 24
    maximum = max((s.end for s in spans), default=0.0)
    ticks = _ticks(maximum)
    scale = plot / (ticks[-1] or 1.0)
    kinds = {s.kind for s in spans}
    legend = [("Frame compile", FORWARD_COLOR)]
    if "backward" in kinds:
        legend.append(("Backward compile", BACKWARD_COLOR))
    desc = (
        f"{len(spans)} compiles of {sum(r.frames for r in rows)} frames "
        f"over {format_seconds(maximum)}"
    )
    out = _svg_open(_WIDTH, height, title, desc)
    out += _legend(legend, _LABEL_WIDTH, 16)
    out += _axis(_LABEL_WIDTH, plot, top, bottom, maximum)
    gap = 0.0  # pixels; widened until the whole chart holds at most MAX_BOXES boxes
    merged = [_pixel_merge(row.spans, scale, gap) for row in rows]
    while sum(len(m) for m in merged) > MAX_BOXES and gap < plot:
        gap = gap * 2 or 1.0
        merged = [_pixel_merge(row.spans, scale, gap) for row in rows]
    for index, (row, boxes) in enumerate(zip(rows, merged, strict=True)):
        y = top + index * _ROW
        out.append('<g class="row">')
        out.append(
            f'<text x="{_LABEL_WIDTH - 8}" y="{y + 15}" text-anchor="end">'
            f"{xml_escape(_row_label(row.label, row.name))}"
            f"<title>{xml_escape(row.label + (' ' + row.name if row.name else ''))}</title></text>"
        )
        for kind, start, end, members in boxes:
            x = _LABEL_WIDTH + start * scale
            width = (end - start) * scale
            width = width - 1 if width > 3 else max(1.5, width)  # back-to-back compiles stay apart
            color = FORWARD_COLOR if kind == "forward" else BACKWARD_COLOR
            if row.frames > 1:
                color = OTHER_COLOR
            first = members[0]
            tip = (
                f"{first.label} {kind}: {format_seconds(first.start)} to "
                f"{format_seconds(first.end)} ({format_seconds(first.duration)})"
                if len(members) == 1
                else f"{len(members)} compiles ({members[0].label} to {members[-1].label}), "
                f"{format_seconds(start)} to {format_seconds(end)}"
            )
            out.append(
                f'<rect x="{x:.1f}" y="{y + 4}" width="{width:.1f}" height="{_BAR}" '
                f'fill="{color}"><title>{xml_escape(tip)}</title></rect>'
            )
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def _pixel_merge(
    spans: Sequence[TimelineSpan], scale: float, pixels: float
) -> list[tuple[str, float, float, list[TimelineSpan]]]:
    """Spans of one kind fewer than ``pixels`` apart become one box (hover tells how many)."""
    merged: list[tuple[str, float, float, list[TimelineSpan]]] = []
    gap = pixels / scale if scale > 0 else 0.0
    for span in sorted(spans, key=lambda s: (s.kind, s.start)):
        if merged and merged[-1][0] == span.kind and span.start - merged[-1][2] <= gap:
            kind, start, end, members = merged[-1]
            members.append(span)
            merged[-1] = (kind, start, max(end, span.end), members)
        else:
            merged.append((span.kind, span.start, span.end, [span]))
    return merged
