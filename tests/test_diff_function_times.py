"""Which function's compile time changed between two runs, by phase: the compile-time
trees of both runs of the captured ``recompile`` pair (``scale`` compiled once, then three
times), in the comparison's JSON, its text and its page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sphinx_torchtrace import cli
from sphinx_torchtrace.site.blocks import Table
from sphinx_torchtrace.site.pages.overview.compile_time import _slowest_rank
from sphinx_torchtrace.site.pages.overview.view import Overview, seconds_text
from sphinx_torchtrace.site.plan import PageSettings, plan_trace
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses import compile_time as ct
from sphinx_torchtrace.trace.analyses.naming import rank_number
from sphinx_torchtrace.trace.analyses.phases import compile_seconds
from sphinx_torchtrace.trace.comparing.function_times import function_times
from sphinx_torchtrace.trace.comparing.trend import time_change_text, trend, trend_lines

from .conftest import DATA, SiteMaker, warnings_of

PAIR = DATA / "captured" / "pairs" / "recompile"


def _ranks() -> tuple[object, object]:
    return load_trace(PAIR / "baseline").ranks[0], load_trace(PAIR / "new").ranks[0]


def test_functions_add_up_to_each_runs_tree_by_phase() -> None:
    old, new = _ranks()
    found = function_times(old, new)  # type: ignore[arg-type]
    for side, rank in (("baseline", old), ("new", new)):
        totals = ct.phase_totals(ct.compile_time_tree(rank))  # type: ignore[arg-type]
        for phase, seconds in totals.items():
            summed = sum(getattr(f, side).get(phase, 0.0) for f in found)
            assert summed == pytest.approx(seconds, abs=1e-9), (side, phase)
    assert [f.function for f in found][:2] == ["scale", "stable"]  # the recompiled one first
    assert abs(found[0].change) >= abs(found[1].change)
    assert found[0].file == "program.py"


def test_the_comparison_names_them(capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _ranks()
    top = function_times(old, new)[0]  # type: ignore[arg-type]
    cli.main(["diff", "--json", str(PAIR / "baseline"), str(PAIR / "new")])
    data = json.loads(capsys.readouterr().out)
    [rank] = data["ranks"]
    by_function = rank["compile_time_by_function"]
    assert by_function[0]["function"] == "scale"
    assert by_function[0]["new_seconds"] == round(top.new_seconds, 6)
    cli.main(["diff", str(PAIR / "baseline"), str(PAIR / "new")])
    text = capsys.readouterr().out
    assert (
        f"  scale (program.py): {top.baseline_seconds:.2f} s -> {top.new_seconds:.2f} s, most in"
        in text
    )


def test_the_page_lists_them(make_site: SiteMaker) -> None:
    pairs = "@DATA@/captured/pairs/recompile"
    page = f"Runs\n====\n\n.. torchtrace-diff:: {pairs}/baseline {pairs}/new\n   :name: rc\n"
    app = make_site("simple", "html", pages={"index.rst": page})
    assert "torchtrace.read" not in warnings_of(app)
    html = " ".join((Path(app.outdir) / "index.html").read_text(encoding="utf-8").split())
    assert "By function, from each run\u2019s compile-time tree" in html
    assert "most changed phase" in html and ">scale</code> (program.py)" in html.replace(
        '<code class="docutils literal notranslate"><span class="pre">', "<code>"
    ).replace("</span></code>", "</code>")


TREND = DATA / "captured" / "trend"


def test_a_trend_names_the_most_changed_function_each_step(
    capsys: pytest.CaptureFixture[str],
) -> None:
    runs = [load_trace(TREND / v) for v in ("v1", "v2", "v3")]
    result = trend(runs, ["v1", "v2", "v3"])
    assert len(result.time_changes) == 2
    for before, after, change in zip(runs[:-1], runs[1:], result.time_changes, strict=True):
        expected = function_times(before.ranks[0], after.ranks[0])[0]
        assert change == expected and change is not None and change.change
    lines = trend_lines(result)
    assert f"compile time v1 -> v2 (noisy): {time_change_text(result.time_changes[0])}" in lines
    # the fix of v2 (no graph break) removed the resumed function's compile
    assert result.time_changes[0].function.startswith("torch_dynamo_resume_in_step")
    assert result.time_changes[0].new_seconds == 0


def test_the_slowest_rank_is_shown_beside_its_class() -> None:
    """Alike ranks share a tab; where the slowest is not the tab's own rank, its phases are
    shown beside that rank's, each figure its own tree's."""
    folder = DATA / "corpus" / "ddp_4ranks"
    plan = plan_trace("t", load_trace(folder), "torchtrace")
    view = Overview(plan, PageSettings())
    blocks = _slowest_rank(view)
    assert blocks, "ddp_4ranks: rank 0's tab stands for a slower rank"
    table = next(b for b in blocks if isinstance(b, Table))
    first_name, slowest_name = table.header[1], table.header[2]
    by_number = {rank_number(plan.trace, r): r for r in plan.trace.ranks}
    first = by_number[int(str(first_name).split()[1])]
    slowest = by_number[int(str(slowest_name).split()[1])]
    assert slowest_name.endswith("(slowest)")
    spent = {n: sum(compile_seconds(c) or 0 for c in r.compiles) for n, r in by_number.items()}
    assert spent[rank_number(plan.trace, slowest)] == max(spent.values())
    old = ct.phase_totals(ct.compile_time_tree(first))
    new = ct.phase_totals(ct.compile_time_tree(slowest))
    for row in table.rows:
        key = next(k for k, words in ct.PHASES if words == row[0][0])
        assert row[1][0] == seconds_text(old.get(key, 0.0))
        assert row[2][0] == seconds_text(new.get(key, 0.0))
        assert row[3][0] == f"{new.get(key, 0.0) - old.get(key, 0.0):+.3f} s"
