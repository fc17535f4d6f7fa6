"""The charts view: what the overview's "Compile time charts" show for one rank, as blocks.

What a reader notices when it breaks: a bar missing or doubled, a PDF whose table says
other seconds than the HTML picture, a rank with charts and no words, a function name
shown escaped (``&lt;``) or turned into markup.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sphinx_torchtrace.render.charts import draw
from sphinx_torchtrace.site.blocks import (
    Block,
    Chart,
    Code,
    Emphasis,
    Paragraph,
    Strong,
    Table,
    inline_text,
)
from sphinx_torchtrace.site.pages.charts import MAX_TABLE_SPANS, NO_TIMING, charts_blocks
from sphinx_torchtrace.site.plan import TracePlan, plan_trace
from sphinx_torchtrace.trace import Compile, CompileId, Metrics, RankTrace, Trace, load_trace
from sphinx_torchtrace.trace.analyses.timings import (
    MAX_BARS,
    STAGES,
    CompileTimeRow,
    TimelineRow,
    compile_time_rows,
    timeline_spans,
)

from .conftest import DATA, SHARED

TRAINING = SHARED / "training"
SVG = "{http://www.w3.org/2000/svg}"


def _blocks(path: Path) -> tuple[TracePlan, list[list[Block]]]:
    plan = plan_trace("t", load_trace(path), "tt")
    return plan, [charts_blocks(plan, rank) for rank in plan.trace.ranks]


def _charts(blocks: list[Block]) -> dict[str, Chart]:
    return {b.kind: b for b in blocks if isinstance(b, Chart)}


def _table(chart: Chart) -> Table:
    (table,) = [b for b in chart.fallback if isinstance(b, Table)]
    return table


def _cells(table: Table) -> list[list[str]]:
    return [[inline_text(cell) for cell in row] for row in table.rows]


def _synthetic_rank(compiles: int, name: str = "fn") -> RankTrace:
    """A rank of many timed compiles (more than a chart draws), frame ``i % 97``."""
    rank = RankTrace("many.log", None, 0)
    for i in range(compiles):
        compile_ = Compile(CompileId(None, i % 97, i // 97), 1, i + 1, status="ok")
        start = 1_000_000 * i
        data = {
            "co_name": f"{name}_{i % 97}",
            "entire_frame_compile_time_s": 0.5 + (i % 7) / 10,
            "code_gen_time_s": 0.2,
            "start_time_us": start,
            "end_time_us": start + 500_000,
        }
        compile_.metrics.append(Metrics("compilation_metrics", i + 1, data))
        rank.compiles.append(compile_)
    return rank


def _plan_of(rank: RankTrace) -> TracePlan:
    return plan_trace("t", Trace([rank]), "tt")


def test_training_log_gets_both_charts_with_their_words() -> None:
    _, (blocks,) = _blocks(TRAINING)
    kinds = [type(b).__name__ for b in blocks]
    assert kinds == ["Paragraph", "Paragraph", "Chart", "Paragraph", "Paragraph", "Chart"]
    rubrics = [b for b in blocks if isinstance(b, Paragraph) and isinstance(b.content[0], Strong)]
    assert [inline_text(r.content) for r in rubrics] == [
        "Where the time went",
        "When each compilation ran",
    ]
    intro = blocks[1]
    assert isinstance(intro, Paragraph)
    assert Code("backward()") in intro.content
    assert "slowest" not in inline_text(intro.content)  # five compiles: none aggregated
    charts = _charts(blocks)
    assert charts["compile-times"].title == "Compile time per compilation, by stage"
    assert charts["timeline"].title == "When each compilation ran"


def test_one_bar_per_timed_compile_of_a_training_log() -> None:
    plan, (blocks,) = _blocks(TRAINING)
    chart = _charts(blocks)["compile-times"]
    rank = plan.trace.ranks[0]
    timed = [c.label for c in rank.compiles if c.compilation_metrics]
    assert timed == ["[0/0]", "[1/0_1]", "[2/0_1]", "[3/0]", "[4/0]"]
    root = ET.fromstring(draw(chart.kind, chart.data, chart.title))
    bars = [g for g in root.iter(SVG + "g") if g.get("class") == "bar"]
    assert [b.find(SVG + "text").text for b in bars] == [  # type: ignore[union-attr]
        "[0/0] forward",
        "[1/0_1] opt_step",
        "[2/0_1] wrapper",
        "[3/0] step",
        "[4/0] torch_dynamo_resume_in…",
    ]
    timeline = _charts(blocks)["timeline"]
    root = ET.fromstring(draw(timeline.kind, timeline.data, timeline.title))
    boxes = [r for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None]
    assert len(boxes) == 6  # five frame compiles and the lazy backward of [0/0]


def test_compile_time_table_holds_the_numbers_the_bars_are_drawn_from() -> None:
    _, (blocks,) = _blocks(TRAINING)
    chart = _charts(blocks)["compile-times"]
    rows = chart.data
    assert isinstance(rows, list) and all(isinstance(r, CompileTimeRow) for r in rows)
    table = _table(chart)
    assert list(table.header) == ["Compile", "Function", *STAGES, "Total"]  # all stages used
    cells = _cells(table)
    assert [c[:2] for c in cells] == [[r.label, r.name] for r in rows]
    for row, line in zip(rows, cells, strict=True):
        assert [float(v) for v in line[2:]] == pytest.approx([*row.stages, row.total], abs=5e-4)
    assert cells[0][2:] == ["0.250", "0.856", "0.236", "17.100", "2.208", "20.650"]
    (caption,) = [b for b in chart.fallback if isinstance(b, Paragraph)]
    assert caption.content == [Emphasis("Compile time per compilation, in seconds")]


def test_timeline_table_holds_every_span_the_chart_draws() -> None:
    _, (blocks,) = _blocks(TRAINING)
    chart = _charts(blocks)["timeline"]
    rows = chart.data
    assert isinstance(rows, list) and all(isinstance(r, TimelineRow) for r in rows)
    drawn = sorted((s.label, s.kind, s.start, s.end) for r in rows for s in r.spans)
    table = _table(chart)
    assert list(table.header) == ["Compile", "Function", "Pass", "Start", "End", "Duration"]
    # a span is the whole compile or its backward pass, never "forward" (no forward graph
    # is claimed for a compile that failed before it had one)
    passes = {"whole compile": "forward", "backward": "backward"}
    listed = sorted((c[0], passes[c[2]], float(c[3]), float(c[4])) for c in _cells(table))
    assert [(label, kind) for label, kind, _, _ in listed] == [(d[0], d[1]) for d in drawn]
    for (_, _, start, end), span in zip(listed, drawn, strict=True):
        assert (start, end) == pytest.approx(span[2:], abs=5e-4)
    backward = [c for c in _cells(table) if c[2] == "backward"]
    assert backward == [["[0/0]", "forward", "backward", *backward[0][3:]]]
    assert float(backward[0][5]) == pytest.approx(2.2, abs=0.01)


def test_a_rank_without_timings_says_so() -> None:
    rank = RankTrace("x.log", None, 0, compiles=[Compile(CompileId(None, 0, 0), 1, 1)])
    assert charts_blocks(_plan_of(rank), rank) == [Paragraph([NO_TIMING])]


def test_many_compiles_are_aggregated_and_the_tables_say_how() -> None:
    rank = _synthetic_rank(500)
    blocks = charts_blocks(_plan_of(rank), rank)
    intro = inline_text(blocks[1].content)  # type: ignore[union-attr]
    assert f"The {MAX_BARS - 1} slowest compilations are drawn" in intro
    assert f"the last bar sums the other {500 - MAX_BARS + 1}." in intro
    charts = _charts(blocks)
    cells = _cells(_table(charts["compile-times"]))
    assert len(cells) == MAX_BARS
    assert cells[-1][:2] == [f"{500 - MAX_BARS + 1} more compiles", "—"]
    total = sum(r.total for r in compile_time_rows(rank))
    assert sum(float(c[-1]) for c in cells) == pytest.approx(total, abs=0.05)
    timeline = charts["timeline"]
    assert len(_table(timeline).rows) == MAX_TABLE_SPANS
    assert Paragraph([f"The first {MAX_TABLE_SPANS} of 500 compilations."]) in timeline.fallback


def test_hostile_function_names_are_kept_as_text() -> None:
    hostile = "<script>x</script> `code` :role:`x` \u2028 ]]>"
    rank = _synthetic_rank(3, hostile)
    blocks = charts_blocks(_plan_of(rank), rank)
    charts = _charts(blocks)
    cells = _cells(_table(charts["compile-times"]))
    assert [c[1] for c in cells] == [f"{hostile}_{i}" for i in range(3)]
    timeline_cells = _cells(_table(charts["timeline"]))
    assert {c[1] for c in timeline_cells} == {f"{hostile}_{i}" for i in range(3)}
    for chart in charts.values():
        ET.fromstring(draw(chart.kind, chart.data, chart.title))


@pytest.mark.parametrize(
    "path",
    [SHARED / "tlparse-inputs" / "inputs" / "multi_rank_logs", DATA / "captured" / "aoti"],
)
def test_every_rank_gets_charts_drawn_from_its_own_numbers(path: Path) -> None:
    plan, per_rank = _blocks(path)
    for rank, blocks in zip(plan.trace.ranks, per_rank, strict=True):
        charts = _charts(blocks)
        assert len(_table(charts["compile-times"]).rows) == len(compile_time_rows(rank))
        assert len(_table(charts["timeline"]).rows) == len(timeline_spans(rank))


def test_the_view_imports_no_renderer_and_no_sphinx() -> None:
    code = (
        "import sys, sphinx_torchtrace.site.pages.charts\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('sphinx', 'docutils', 'jinja2')"
        " or m.startswith('sphinx_torchtrace.render')]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
