"""Inline SVG charts made at build time (no plotting library, nothing fetched at view time).

Two pictures per rank, from the numbers of :mod:`sphinx_torchtrace.trace.analyses.timings`:
where each compile spent its time (a stacked bar per compile) and when compiles ran
(a Gantt chart, one row per frame).  The SVG is built as an element tree
(:mod:`.xml`), so trace text in it is always escaped text; every chart has a bounded
number of elements however big the trace is, and a number no chart can place (NaN,
infinite) is drawn as zero rather than raising.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

from ..trace.analyses.timings import (
    MAX_SECONDS,
    STAGES,
    CompileTimeRow,
    TimelineRow,
    TimelineSpan,
    bounded_rows,
    used_stages,
)
from ..trace.comparing.trend import TrendRow
from .xml import Element, element, to_xml

#: Fixed fills with relative luminance 0.15-0.21: at least 3:1 against white and furo's dark
#: background alike (WCAG 1.4.11), so one palette serves both themes.
STAGE_COLORS: tuple[str, ...] = ("#4e79a7", "#c7620a", "#2e8540", "#9c5fb5", "#d03f6f")
OTHER_COLOR = "#6b7280"
FORWARD_COLOR = STAGE_COLORS[0]
BACKWARD_COLOR = STAGE_COLORS[4]

#: A timeline holds at most this many boxes: nearby compiles merge into one.
MAX_BOXES = 600

_FONT = 12
_CHAR_WIDTH = 7.0  # average advance of a 12px sans-serif character, for layout only
_WIDTH = 760
_LABEL_WIDTH = 220
_VALUE_WIDTH = 72
_ROW = 22
_BAR = 14
# The smallest and largest axis a chart draws, in seconds: below, ticks would underflow;
# above, the analysis has already called the value corrupt.
_MIN_AXIS = 1e-9
_MAX_AXIS = MAX_SECONDS * 1e4

_Row = TypeVar("_Row")


def draw(kind: str, data: object, title: str) -> str:
    """The SVG of a :class:`~sphinx_torchtrace.site.blocks.Chart` block.

    ``compile-times`` takes a sequence of :class:`CompileTimeRow`, ``timeline`` one of
    :class:`TimelineRow`; any other kind is a ValueError, other data a TypeError.
    """
    if kind == "compile-times":
        return compile_time_svg(_rows(data, CompileTimeRow), title)
    if kind == "timeline":
        return timeline_svg(_rows(data, TimelineRow), title)
    if kind == "compile-time-tree":  # the icicle of .trace.analyses.compile_time
        from ..trace.analyses.compile_time import Node
        from .icicle import icicle_svg

        if not isinstance(data, Node):
            raise TypeError("compile-time-tree chart data must be a compile_time.Node")
        return icicle_svg(data, title)
    if kind == "trend":
        rows, runs = data if isinstance(data, tuple) and len(data) == 2 else (None, None)
        if not isinstance(runs, (list, tuple)):
            raise TypeError("trend chart data must be (rows, run labels)")
        return trend_svg(_rows(rows, TrendRow), [str(r) for r in runs], title)
    raise ValueError(f"unknown chart kind {kind!r} (known: 'compile-times', 'timeline', 'trend')")


def compile_time_svg(
    rows: Sequence[CompileTimeRow], title: str = "Compile time per compile"
) -> str:
    """A stacked horizontal bar per row; past MAX_BARS rows, see :func:`bounded_rows`."""
    rows = bounded_rows(rows)
    used = used_stages(rows)
    top = 30
    bottom = top + _ROW * max(1, len(rows))
    plot = _WIDTH - _LABEL_WIDTH - _VALUE_WIDTH
    maximum = max((_finite(r.total) for r in rows), default=0.0)
    ticks = _ticks(maximum)
    scale = plot / (ticks[-1] or 1.0)
    desc = "; ".join(f"{r.label}: {format_seconds(r.total)}" for r in rows)
    svg = _svg(_WIDTH, bottom + 30, title, desc or "no compile logged its time")
    svg.append(_legend([(STAGES[i], STAGE_COLORS[i]) for i in used], _LABEL_WIDTH, 16))
    svg.append(_axis(_LABEL_WIDTH, plot, top, bottom, ticks))
    for index, row in enumerate(rows):
        svg.append(_bar(row, used, top + index * _ROW, scale, ticks[-1]))
    return to_xml(svg, pretty=True)


def timeline_svg(rows: Sequence[TimelineRow], title: str = "When each compile ran") -> str:
    """A Gantt chart: one row per frame (see :func:`timeline_rows`), a box per compile."""
    spans = [s for row in rows for s in row.spans]
    top = 30
    bottom = top + _ROW * max(1, len(rows))
    plot = _WIDTH - _LABEL_WIDTH - 24
    maximum = max((_finite(s.end) for s in spans), default=0.0)
    ticks = _ticks(maximum)
    scale = plot / (ticks[-1] or 1.0)
    legend = [("Frame compile", FORWARD_COLOR)]
    if any(s.kind == "backward" for s in spans):
        legend.append(("Backward compile", BACKWARD_COLOR))
    desc = (
        f"{len(spans)} compiles of {sum(r.frames for r in rows)} frames "
        f"over {format_seconds(maximum)}"
    )
    svg = _svg(_WIDTH, bottom + 30, title, desc)
    svg.append(_legend(legend, _LABEL_WIDTH, 16))
    svg.append(_axis(_LABEL_WIDTH, plot, top, bottom, ticks))
    gap = 0.0  # pixels; widened until the whole chart holds at most MAX_BOXES boxes
    merged = [_pixel_merge(row.spans, scale, gap) for row in rows]
    while sum(len(m) for m in merged) > MAX_BOXES and gap < plot:
        gap = gap * 2 or 1.0
        merged = [_pixel_merge(row.spans, scale, gap) for row in rows]
    for index, (row, boxes) in enumerate(zip(rows, merged, strict=True)):
        svg.append(_timeline_row(row, boxes, top + index * _ROW, scale, ticks[-1]))
    return to_xml(svg, pretty=True)


#: Rows of a trend chart drawn at most (the table beside it lists them all).
MAX_TREND_ROWS = 60


def trend_svg(rows: Sequence[TrendRow], runs: Sequence[str], title: str) -> str:
    """A small line per function: its compile time in each run, oldest first, each line
    scaled to its own largest time (a sparkline: the shape, not the size, compares); a
    run without the function leaves a gap.  Each point's tooltip says run and time."""
    shown = list(rows)[:MAX_TREND_ROWS]
    top, row_height, plot = 34, 26, _WIDTH - _LABEL_WIDTH - _VALUE_WIDTH
    bottom = top + row_height * max(1, len(shown))
    step = plot / max(1, len(runs) - 1)
    desc = f"compile time of {len(rows)} functions over {len(runs)} runs"
    svg = _svg(_WIDTH, bottom + 10, title, desc)
    for i, run in enumerate(runs):
        x = _LABEL_WIDTH + i * step
        svg.append(element("text", {"x": f"{x:.0f}", "y": "16", "text-anchor": "middle"}, run[:16]))
    for index, row in enumerate(shown):
        y0 = top + index * row_height
        group = element("g", {"class": "trend-row"})
        group.append(element("text", {"x": 6, "y": f"{y0 + 16:.0f}"}, _row_label(row.label, None)))
        values = [_finite(v) if v is not None else None for v in row.seconds]
        biggest = max((v for v in values if v is not None), default=0.0) or 1.0
        points: list[tuple[float, float, int]] = []
        for i, value in enumerate(values):
            if value is None:
                if len(points) > 1:
                    group.append(_polyline(points))
                points = []
                continue
            y = y0 + row_height - 6 - (row_height - 10) * value / biggest
            points.append((_LABEL_WIDTH + i * step, y, i))
        if len(points) > 1:
            group.append(_polyline(points))
        for i, (value, run) in enumerate(zip(values, runs, strict=False)):
            if value is None:
                continue
            y = y0 + row_height - 6 - (row_height - 10) * value / biggest
            dot = element(
                "circle",
                {
                    "cx": f"{_LABEL_WIDTH + i * step:.1f}",
                    "cy": f"{y:.1f}",
                    "r": 3,
                    "fill": FORWARD_COLOR,
                },
            )
            dot.append(element("title", None, f"{run}: {format_seconds(value)}"))
            group.append(dot)
        last = next((v for v in reversed(values) if v is not None), None)
        if last is not None:
            group.append(
                element(
                    "text",
                    {"x": f"{_WIDTH - _VALUE_WIDTH + 8:.0f}", "y": f"{y0 + 16:.0f}"},
                    format_seconds(last),
                )
            )
        svg.append(group)
    return to_xml(svg, pretty=True)


def _polyline(points: Sequence[tuple[float, float, int]]) -> Element:
    return element(
        "polyline",
        {
            "points": " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points),
            "fill": "none",
            "stroke": FORWARD_COLOR,
            "stroke-width": "1.5",
        },
    )


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


# --------------------------------------------------------------------------- pieces


def _svg(width: int, height: int, title: str, desc: str) -> Element:
    return element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "class": "torchtrace-chart",
            "role": "img",
            "width": width,
            "height": height,
            "viewBox": f"0 0 {width} {height}",
            "aria-label": title,
            "style": "max-width:100%;height:auto;font-family:inherit",
            "font-size": _FONT,
            "fill": "currentColor",
        },
        element("title", None, title),
        element("desc", None, desc),
    )


def _legend(entries: Sequence[tuple[str, str]], x: float, y: float) -> Element:
    group = element("g", {"class": "legend"})
    for label, color in entries:
        group.append(
            element(
                "rect",
                {"x": f"{x:.0f}", "y": f"{y - 10:.0f}", "width": 12, "height": 12, "fill": color},
            ),
            element("text", {"x": f"{x + 16:.0f}", "y": f"{y:.0f}"}, label),
        )
        x += 16 + len(label) * _CHAR_WIDTH + 18
    return group


def _axis(left: float, width: float, top: float, bottom: float, ticks: list[float]) -> Element:
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    scale = width / (ticks[-1] or 1.0)
    group = element("g", {"class": "axis"})
    for value in ticks:
        x = f"{left + value * scale:.1f}"
        group.append(
            element(
                "line",
                {
                    "x1": x,
                    "y1": f"{top:.0f}",
                    "x2": x,
                    "y2": f"{bottom:.0f}",
                    "stroke": "currentColor",
                    "stroke-opacity": "0.15",
                },
            ),
            element(
                "text",
                {"x": x, "y": f"{bottom + 15:.0f}", "text-anchor": "middle"},
                _tick_label(value, step),
            ),
        )
    baseline = {
        "x1": f"{left:.0f}",
        "y1": f"{bottom:.0f}",
        "x2": f"{left + width:.0f}",
        "y2": f"{bottom:.0f}",
        "stroke": "currentColor",
        "stroke-opacity": "0.6",
    }
    return group.append(element("line", baseline))


def _bar(row: CompileTimeRow, used: Sequence[int], y: int, scale: float, top: float) -> Element:
    """One compile's bar: a segment per stage, its label on the left and total on the right."""
    times = ", ".join(
        f"{STAGES[i]} {format_seconds(row.stages[i])}" for i in used if row.stages[i] > 0
    )
    tip = f"{_full_label(row.label, row.name)}: {times}; total {format_seconds(row.total)}"
    group = element(
        "g",
        {"class": "bar"},
        element("title", None, tip),
        element(
            "text",
            {"x": _LABEL_WIDTH - 8, "y": y + 15, "text-anchor": "end"},
            _row_label(row.label, row.name),
        ),
    )
    x = float(_LABEL_WIDTH)
    for i in used:
        width = min(_finite(row.stages[i]), top) * scale
        if width <= 0:
            continue
        drawn = width - 1 if width > 3 else width  # a hairline gap tells segments apart
        group.append(
            element(
                "rect",
                {
                    "x": f"{x:.1f}",
                    "y": y + 4,
                    "width": f"{drawn:.1f}",
                    "height": _BAR,
                    "fill": STAGE_COLORS[i],
                },
            )
        )
        x += width
    return group.append(
        element("text", {"x": f"{x + 6:.1f}", "y": y + 15}, format_seconds(row.total))
    )


_Box = tuple[str, float, float, list[TimelineSpan]]


def _timeline_row(
    row: TimelineRow, boxes: Sequence[_Box], y: int, scale: float, top: float
) -> Element:
    """One frame's row: its label, then a box per (merged) compile with its times on hover."""
    label = element(
        "text",
        {"x": _LABEL_WIDTH - 8, "y": y + 15, "text-anchor": "end"},
        _row_label(row.label, row.name),
        element("title", None, _full_label(row.label, row.name)),
    )
    group = element("g", {"class": "row"}, label)
    for kind, start, end, members in boxes:
        x = _LABEL_WIDTH + min(_finite(start), top) * scale
        width = (min(_finite(end), top) - min(_finite(start), top)) * scale
        width = width - 1 if width > 3 else max(1.5, width)  # back-to-back compiles stay apart
        color = FORWARD_COLOR if kind == "forward" else BACKWARD_COLOR
        if row.frames > 1:
            color = OTHER_COLOR
        box: dict[str, str | int] = {
            "x": f"{x:.1f}",
            "y": y + 4,
            "width": f"{width:.1f}",
            "height": _BAR,
            "fill": color,
        }
        group.append(element("rect", box, element("title", None, _box_tip(kind, members))))
    return group


def _box_tip(kind: str, members: Sequence[TimelineSpan]) -> str:
    first, last = members[0], members[-1]
    if len(members) == 1:
        # the compile's span, not a "forward" graph: a failed compile has none
        what = "backward compile" if kind == "backward" else "compile"
        return (
            f"{first.label} {what}: {format_seconds(first.start)} to "
            f"{format_seconds(first.end)} ({format_seconds(first.duration)})"
        )
    end = max(m.end for m in members)
    return (
        f"{len(members)} compiles ({first.label} to {last.label}), "
        f"{format_seconds(first.start)} to {format_seconds(end)}"
    )


def _pixel_merge(spans: Sequence[TimelineSpan], scale: float, pixels: float) -> list[_Box]:
    """Spans of one kind fewer than ``pixels`` apart become one box (hover tells how many)."""
    merged: list[_Box] = []
    gap = pixels / scale if scale > 0 else 0.0
    for span in sorted(spans, key=lambda s: (s.kind, s.start)):
        if merged and merged[-1][0] == span.kind and span.start - merged[-1][2] <= gap:
            kind, start, end, members = merged[-1]
            members.append(span)
            merged[-1] = (kind, start, max(end, span.end), members)
        else:
            merged.append((span.kind, span.start, span.end, [span]))
    return merged


# --------------------------------------------------------------------------- numbers and text


def _rows(data: object, kind: type[_Row]) -> list[_Row]:
    if not isinstance(data, (list, tuple)) or not all(isinstance(r, kind) for r in data):
        raise TypeError(f"chart data must be a list of {kind.__name__}")
    return list(data)


def _finite(value: float) -> float:
    """A value a chart can place: NaN, infinities and negatives count as zero."""
    return value if math.isfinite(value) and value > 0 else 0.0


def _ticks(maximum: float, target: int = 6) -> list[float]:
    """Round tick values (1, 2, 5 × 10ⁿ) from 0 to at least ``maximum``."""
    if not math.isfinite(maximum) or maximum <= 0:
        return [0.0]
    raw = min(max(maximum, _MIN_AXIS), _MAX_AXIS) / target
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    count = math.ceil(min(max(maximum, _MIN_AXIS), _MAX_AXIS) / step - 1e-9)
    return [i * step for i in range(count + 1)]


def _tick_label(value: float, step: float) -> str:
    if step >= 1 or value >= 1:
        return f"{value:g} s"
    if step >= 0.001:
        return f"{value * 1000:g} ms"
    return f"{value * 1e6:g} µs"


def _full_label(label: str, name: str | None) -> str:
    return f"{label} {name}" if name else label


def _row_label(label: str, name: str | None) -> str:
    text = _full_label(label, name)
    chars = int((_LABEL_WIDTH - 12) / _CHAR_WIDTH)
    return text if len(text) <= chars else text[: max(1, chars - 1)] + "…"
