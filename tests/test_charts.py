"""Compile-time and timeline charts: the numbers from real logs, and SVG a browser can show.

The numbers come from :mod:`sphinx_torchtrace.trace.analyses.timings`, the pictures from
:mod:`sphinx_torchtrace.render.charts` (``draw``, as the Sphinx layer calls it for a
``Chart`` block).
"""

from __future__ import annotations

import itertools
import json
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from sphinx_torchtrace.render.charts import draw
from sphinx_torchtrace.render.xml import clean_text
from sphinx_torchtrace.trace import Compile, CompileId, Metrics, RankTrace, load_trace
from sphinx_torchtrace.trace.analyses import timings

DATA = Path(__file__).parent / "data"
TRAINING = DATA / "shared" / "training"
RECOMPILES = DATA / "shared" / "recompiles"
MULTI_RANK = DATA / "shared" / "tlparse-inputs" / "inputs" / "multi_rank_logs"
AOTI = DATA / "captured" / "aoti"
SVG = "{http://www.w3.org/2000/svg}"


def _rank(path: Path) -> RankTrace:
    return load_trace(path).ranks[0]


def _bars(svg: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [g for g in root.iter(SVG + "g") if g.get("class") == "bar"]


def _timeline(rank: RankTrace, title: str = "t") -> str:
    return draw("timeline", timings.timeline_rows(timings.timeline_spans(rank)), title)


def _metric(compile_: Compile, key: str) -> float:
    value = compile_.compilation_metrics[0].data[key]
    assert isinstance(value, float)
    return value


def test_every_compile_with_metrics_gets_a_row_whose_stages_add_up_to_its_frame_time() -> None:
    rank = _rank(RECOMPILES)
    rows = timings.compile_time_rows(rank)
    timed = [c for c in rank.compiles if c.compilation_metrics]
    assert [r.label for r in rows] == [c.label for c in timed]
    for row, compile_ in zip(rows, timed, strict=True):
        assert row.source == "metrics"
        assert all(v >= 0 for v in row.stages)
        assert row.forward == pytest.approx(_metric(compile_, "entire_frame_compile_time_s"))
    first = rows[0]  # [0/0] static_fn: code generation dominates a cold compile
    assert first.name == "static_fn"
    assert first.stages[3] == pytest.approx(_metric(timed[0], "code_gen_time_s"))
    assert max(first.stages) == first.stages[3]


def test_backward_compile_is_its_own_segment() -> None:
    rows = {r.label: r for r in timings.compile_time_rows(_rank(TRAINING))}
    assert set(rows) == {"[0/0]", "[1/0_1]", "[2/0_1]", "[3/0]", "[4/0]"}
    forward = rows["[0/0]"]
    assert forward.name == "forward"
    assert forward.stages[4] == pytest.approx(2.207659)  # backward_cumulative_compile_time_us
    assert forward.total == pytest.approx(18.441974 + 2.207659)
    # a frame Dynamo restarted: its last attempt carries the metrics of both attempts
    assert rows["[1/0_1]"].stages == pytest.approx((0.050238, 0, 0, 0, 0))


def test_timeline_spans_are_ordered_non_negative_and_match_the_metrics() -> None:
    rank = _rank(TRAINING)
    spans = timings.timeline_spans(rank)
    assert spans[0].start == 0
    assert [s.start for s in spans] == sorted(s.start for s in spans)
    assert all(s.duration >= 0 for s in spans)
    forward = [s for s in spans if s.kind == "forward"]
    assert [s.label for s in forward] == ["[0/0]", "[1/0_1]", "[2/0_1]", "[3/0]", "[4/0]"]
    # the chromium entire_frame_compile pair and the metrics time agree to a millisecond
    assert forward[0].duration == pytest.approx(18.441974, abs=1e-3)
    backward = [s for s in spans if s.kind == "backward"]
    assert [s.label for s in backward] == ["[0/0]"]
    assert backward[0].start >= forward[0].end  # compiled at the first backward()
    # recompiles of one frame share a row
    rows = timings.timeline_rows(timings.timeline_spans(_rank(RECOMPILES)))
    assert [(r.label, len(r.spans)) for r in rows] == [("[0/*]", 5), ("[1/*]", 6), ("[2/*]", 4)]


def test_every_rank_of_a_multi_rank_trace_has_its_numbers() -> None:
    trace = load_trace(MULTI_RANK)
    for rank in trace.ranks:
        rows = timings.compile_time_rows(rank)
        spans = timings.timeline_spans(rank)
        assert rows and spans
        assert all(s.duration >= 0 and s.start >= 0 for s in spans)
        assert len({s.label for s in spans if s.kind == "forward"}) == len(rows)


def test_events_stand_in_for_missing_metrics() -> None:
    rows = timings.compile_time_rows(_rank(AOTI))  # AOT Inductor: an inductor_compile pair only
    assert len(rows) == 1
    assert rows[0].source == "events"
    assert rows[0].stages[2] == pytest.approx(45.92, abs=0.01)


def test_svg_parses_and_has_one_bar_per_compile() -> None:
    rows = timings.compile_time_rows(_rank(RECOMPILES))
    svg = draw("compile-times", rows, "Compile time")
    root = ET.fromstring(svg)
    assert root.get("role") == "img" and root.get("aria-label") == "Compile time"
    assert root.find(SVG + "title") is not None
    bars = _bars(svg)
    assert len(bars) == len(rows) == 15
    labels = [t.text for b in bars for t in b.iter(SVG + "text")][::2]
    assert labels[0] == "[0/0] static_fn"
    timeline = ET.fromstring(_timeline(_rank(RECOMPILES)))
    boxes = [r for r in timeline.iter(SVG + "rect") if r.find(SVG + "title") is not None]
    assert len(boxes) == 15


HOSTILE_TEXT = [
    "<script>alert(1)</script>",
    "]]><x/>",
    "\"'&amp;<!--",
    "a\u2028b",
    "\ud800lone\udfff",
    "bell\x07nul\x00del\x7f",
]
HOSTILE_NUMBERS = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "5e-324",
    "1e308",
    "1" + "0" * 400,
    "-3",
]
_TIMING = re.compile(r'("(?:\w*_time_(?:s|us)|start_time|ts|dur)":\s*)(-?\d[\d.eE+-]*)')


def _training_log(tmp_path: Path, edit: Callable[[str], str]) -> RankTrace:
    """The training log with its text edited, as a hostile or broken producer would write it."""
    log = tmp_path / "edited.log"
    log.write_text(edit(next(TRAINING.glob("*.log")).read_text()), encoding="utf-8")
    return _rank(log)


@pytest.mark.parametrize("hostile", HOSTILE_TEXT)
def test_hostile_names_are_only_ever_text(tmp_path: Path, hostile: str) -> None:
    name = json.dumps(hostile)
    rank = _training_log(
        tmp_path,
        lambda text: text.replace('"co_name": "forward"', f'"co_name": {name}').replace(
            '"name": "dynamo"', f'"name": {name}'
        ),
    )
    rows = timings.bounded_rows(timings.compile_time_rows(rank))
    assert rows[0].name == hostile
    clean = clean_text(hostile)  # what XML cannot hold, as visible escapes
    for svg in (draw("compile-times", rows, hostile), _timeline(rank, hostile)):
        svg.encode("utf-8")  # a lone surrogate would raise here
        assert "<script" not in svg and "<x/>" not in svg and "<!--" not in svg
        root = ET.fromstring(svg)  # raises on a stray & or control character
        assert root.get("aria-label") == clean
        title = root.find(SVG + "title")
        assert title is not None and title.text == clean
        texts = [t.text or "" for t in root.iter(SVG + "text")]
        titles = [t.text or "" for t in root.iter(SVG + "title")]
        assert any(clean[:10] in text for text in texts)
        assert any(f"] {clean}" in title for title in titles)  # "[0/0] name", "[0/*] name"


@pytest.mark.parametrize("hostile", HOSTILE_NUMBERS)
@pytest.mark.parametrize("every", [1, 2, 3])
def test_hostile_numbers_count_as_missing(tmp_path: Path, hostile: str, every: int) -> None:
    """Every ``every``-th timing of the log replaced: nothing raises, every number is finite."""
    count = itertools.count()

    def replace(match: re.Match[str]) -> str:
        return match.group(1) + (hostile if next(count) % every == 0 else match.group(2))

    rank = _training_log(tmp_path, lambda text: _TIMING.sub(replace, text))
    rows = timings.bounded_rows(timings.compile_time_rows(rank))
    spans = timings.timeline_spans(rank)
    assert all(math.isfinite(v) and 0 <= v <= timings.MAX_SECONDS for r in rows for v in r.stages)
    assert all(math.isfinite(s.start) and 0 <= s.duration < 1e6 for s in spans)
    ET.fromstring(draw("compile-times", rows, "t"))
    ET.fromstring(draw("timeline", timings.timeline_rows(spans), "t"))


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 5e-324, 1e308, -1.0])
def test_the_drawing_never_raises_on_numbers_it_cannot_place(value: float) -> None:
    """Rows not made by the analysis (a future caller's) still draw: the number counts as 0."""
    row = timings.CompileTimeRow("[0/0]", "f", (value, 1.0, 0.0, 0.0, 0.0), "metrics")
    span = timings.TimelineSpan("[0/*]", "[0/0]", "f", "forward", 0.0, value)
    ET.fromstring(draw("compile-times", [row], "t"))
    ET.fromstring(draw("timeline", timings.timeline_rows([span]), "t"))


def test_draw_refuses_unknown_kinds_and_data() -> None:
    with pytest.raises(ValueError):
        draw("pie", [], "t")
    with pytest.raises(TypeError):
        draw("timeline", timings.compile_time_rows(_rank(TRAINING)), "t")


def test_odd_metrics_never_break_the_numbers() -> None:
    compile_ = Compile(CompileId(None, 0, 0), 1, 1)
    for data in (
        {"entire_frame_compile_time_s": "soon", "backend_compile_time_s": None},
        {"entire_frame_compile_time_s": float("nan"), "code_gen_time_s": True},
        {"entire_frame_compile_time_s": 1.0, "backend_compile_time_s": 3.0},  # not nested
    ):
        compile_.metrics = [Metrics("compilation_metrics", 1, data)]
        rank = RankTrace("x.log", None, 0, compiles=[compile_])
        for row in timings.compile_time_rows(rank):
            assert all(v >= 0 for v in row.stages)
            ET.fromstring(draw("compile-times", [row], "t"))


def _huge_rank(compiles: int) -> RankTrace:
    rank = RankTrace("huge.log", None, 0)
    for i in range(compiles):
        compile_ = Compile(CompileId(None, i % 97, i // 97), 1, i + 1, status="ok")
        start = 1_000_000 * i
        compile_.metrics.append(
            Metrics(
                "compilation_metrics",
                i + 1,
                {
                    "co_name": f"fn_{i % 97}",
                    "entire_frame_compile_time_s": 0.5 + (i % 7) / 10,
                    "backend_compile_time_s": 0.4,
                    "inductor_compile_time_s": 0.3,
                    "code_gen_time_s": 0.2,
                    "start_time_us": start,
                    "end_time_us": start + 500_000,
                },
            )
        )
        rank.compiles.append(compile_)
    return rank


def test_a_huge_trace_gives_a_bounded_readable_svg() -> None:
    rank = _huge_rank(5000)
    rows = timings.compile_time_rows(rank)
    assert len(rows) == 5000
    drawn = timings.bounded_rows(rows)
    assert len(drawn) == timings.MAX_BARS
    assert drawn[-1].label == f"{5000 - timings.MAX_BARS + 1} more compiles"
    assert sum(r.total for r in drawn) == pytest.approx(sum(r.total for r in rows))
    svg = draw("compile-times", timings.bounded_rows(rows), "t")
    assert len(_bars(svg)) == timings.MAX_BARS
    timeline = _timeline(rank)
    ET.fromstring(timeline)
    assert len(svg.encode()) < 200_000 and len(timeline.encode()) < 200_000
    rows_drawn = timings.timeline_rows(timings.timeline_spans(rank))
    assert len(rows_drawn) == timings.MAX_TIMELINE_ROWS
    assert rows_drawn[-1].label == f"{97 - timings.MAX_TIMELINE_ROWS + 1} more frames"


def test_a_trace_without_timing_draws_nothing() -> None:
    rank = RankTrace("x.log", None, 0, compiles=[Compile(CompileId(None, 0, 0), 1, 1)])
    assert timings.compile_time_rows(rank) == []
    assert timings.timeline_spans(rank) == []


def test_unpaired_chromium_events_are_ignored() -> None:
    rank = _rank(TRAINING)
    before = timings.timeline_spans(rank)
    # dropping every E event leaves nothing paired: the metrics' start and end stand in
    rank.chromium_events = [e for e in rank.chromium_events if (e.decode() or {}).get("ph") != "E"]
    timings._cache.clear()
    after = timings.timeline_spans(rank)
    assert [s.label for s in after] == [s.label for s in before if s.kind == "forward"]
    assert all(s.duration >= 0 for s in after)
