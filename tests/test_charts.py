"""Compile-time and timeline charts: the numbers from real logs, and SVG a browser can show."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sphinx_torchtrace import charts
from sphinx_torchtrace.trace import Compile, CompileId, Metrics, RankTrace, load_trace

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


def _metric(compile_: Compile, key: str) -> float:
    value = compile_.compilation_metrics[0].data[key]
    assert isinstance(value, float)
    return value


def test_every_compile_with_metrics_gets_a_row_whose_stages_add_up_to_its_frame_time() -> None:
    rank = _rank(RECOMPILES)
    rows = charts.compile_time_rows(rank)
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
    rows = {r.label: r for r in charts.compile_time_rows(_rank(TRAINING))}
    assert set(rows) == {"[0/0]", "[1/0_1]", "[2/0_1]", "[3/0]", "[4/0]"}
    forward = rows["[0/0]"]
    assert forward.name == "forward"
    assert forward.stages[4] == pytest.approx(2.207659)  # backward_cumulative_compile_time_us
    assert forward.total == pytest.approx(18.441974 + 2.207659)
    # a frame Dynamo restarted: its last attempt carries the metrics of both attempts
    assert rows["[1/0_1]"].stages == pytest.approx((0.050238, 0, 0, 0, 0))


def test_timeline_spans_are_ordered_non_negative_and_match_the_metrics() -> None:
    rank = _rank(TRAINING)
    spans = charts.timeline_spans(rank)
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
    rows = charts.timeline_rows(charts.timeline_spans(_rank(RECOMPILES)))
    assert [(r.label, len(r.spans)) for r in rows] == [("[0/*]", 5), ("[1/*]", 6), ("[2/*]", 4)]


def test_every_rank_of_a_multi_rank_trace_has_its_numbers() -> None:
    trace = load_trace(MULTI_RANK)
    for rank in trace.ranks:
        rows = charts.compile_time_rows(rank)
        spans = charts.timeline_spans(rank)
        assert rows and spans
        assert all(s.duration >= 0 and s.start >= 0 for s in spans)
        assert len({s.label for s in spans if s.kind == "forward"}) == len(rows)


def test_events_stand_in_for_missing_metrics() -> None:
    rows = charts.compile_time_rows(_rank(AOTI))  # AOT Inductor: an inductor_compile pair only
    assert len(rows) == 1
    assert rows[0].source == "events"
    assert rows[0].stages[2] == pytest.approx(45.92, abs=0.01)


def test_svg_parses_and_has_one_bar_per_compile() -> None:
    rows = charts.compile_time_rows(_rank(RECOMPILES))
    svg = charts.compile_time_svg(rows, "Compile time")
    root = ET.fromstring(svg)
    assert root.get("role") == "img" and root.get("aria-label") == "Compile time"
    assert root.find(SVG + "title") is not None
    bars = _bars(svg)
    assert len(bars) == len(rows) == 15
    labels = [t.text for b in bars for t in b.iter(SVG + "text")][::2]
    assert labels[0] == "[0/0] static_fn"
    timeline = ET.fromstring(charts.timeline_svg(charts.timeline_spans(_rank(RECOMPILES))))
    boxes = [r for r in timeline.iter(SVG + "rect") if r.find(SVG + "title") is not None]
    assert len(boxes) == 15


def test_hostile_names_are_escaped() -> None:
    hostile = '<script>&"\x07'
    compile_ = Compile(CompileId(None, 0, 0), 1, 1, status="ok")
    compile_.metrics.append(
        Metrics("compilation_metrics", 1, {"co_name": hostile, "entire_frame_compile_time_s": 1.5,
                                            "start_time_us": 10, "end_time_us": 1_500_010})
    )
    rank = RankTrace("x.log", None, 0, compiles=[compile_])
    svg = charts.compile_time_svg(charts.compile_time_rows(rank), title=hostile)
    timeline = charts.timeline_svg(charts.timeline_spans(rank), title=hostile)
    for text in (svg, timeline):
        assert "<script" not in text
        root = ET.fromstring(text)  # would raise on a stray & or control character
        assert root.get("aria-label") == '<script>&"\ufffd'
        assert any("<script>" in (t.text or "") for t in root.iter(SVG + "text"))


def test_odd_metrics_never_break_the_numbers() -> None:
    compile_ = Compile(CompileId(None, 0, 0), 1, 1)
    for data in (
        {"entire_frame_compile_time_s": "soon", "backend_compile_time_s": None},
        {"entire_frame_compile_time_s": float("nan"), "code_gen_time_s": True},
        {"entire_frame_compile_time_s": 1.0, "backend_compile_time_s": 3.0},  # not nested
    ):
        compile_.metrics = [Metrics("compilation_metrics", 1, data)]
        rank = RankTrace("x.log", None, 0, compiles=[compile_])
        for row in charts.compile_time_rows(rank):
            assert all(v >= 0 for v in row.stages)
            ET.fromstring(charts.compile_time_svg([row]))


def _huge_rank(compiles: int) -> RankTrace:
    rank = RankTrace("huge.log", None, 0)
    for i in range(compiles):
        compile_ = Compile(CompileId(None, i % 97, i // 97), 1, i + 1, status="ok")
        start = 1_000_000 * i
        compile_.metrics.append(
            Metrics("compilation_metrics", i + 1, {
                "co_name": f"fn_{i % 97}", "entire_frame_compile_time_s": 0.5 + (i % 7) / 10,
                "backend_compile_time_s": 0.4, "inductor_compile_time_s": 0.3,
                "code_gen_time_s": 0.2, "start_time_us": start, "end_time_us": start + 500_000,
            })
        )
        rank.compiles.append(compile_)
    return rank


def test_a_huge_trace_gives_a_bounded_readable_svg() -> None:
    rank = _huge_rank(5000)
    rows = charts.compile_time_rows(rank)
    assert len(rows) == 5000
    drawn = charts.bounded_rows(rows)
    assert len(drawn) == charts.MAX_BARS
    assert drawn[-1].label == f"{5000 - charts.MAX_BARS + 1} more compiles"
    assert sum(r.total for r in drawn) == pytest.approx(sum(r.total for r in rows))
    svg = charts.compile_time_svg(rows)
    assert len(_bars(svg)) == charts.MAX_BARS
    timeline = charts.timeline_svg(charts.timeline_spans(rank))
    ET.fromstring(timeline)
    assert len(svg.encode()) < 200_000 and len(timeline.encode()) < 200_000
    rows_drawn = charts.timeline_rows(charts.timeline_spans(rank))
    assert len(rows_drawn) == charts.MAX_TIMELINE_ROWS
    assert rows_drawn[-1].label == f"{97 - charts.MAX_TIMELINE_ROWS + 1} more frames"


def test_a_trace_without_timing_draws_nothing() -> None:
    rank = RankTrace("x.log", None, 0, compiles=[Compile(CompileId(None, 0, 0), 1, 1)])
    assert charts.compile_time_rows(rank) == []
    assert charts.timeline_spans(rank) == []


def test_unpaired_chromium_events_are_ignored() -> None:
    rank = _rank(TRAINING)
    before = charts.timeline_spans(rank)
    # dropping every E event leaves nothing paired: the metrics' start and end stand in
    rank.chromium_events = [e for e in rank.chromium_events if (e.decode() or {}).get("ph") != "E"]
    charts._cache.clear()
    after = charts.timeline_spans(rank)
    assert [s.label for s in after] == [s.label for s in before if s.kind == "forward"]
    assert all(s.duration >= 0 for s in after)


@pytest.mark.parametrize(
    ("sections", "shown"),
    [(None, True), ("", True), ("compiles, charts", True), ("compiles", False), ("all", True)],
)
def test_sections_option_turns_charts_off(sections: str | None, shown: bool) -> None:
    options = {} if sections is None else {"sections": sections}
    assert charts.section_enabled(options) is shown
