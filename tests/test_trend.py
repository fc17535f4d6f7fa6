"""A trend over runs: each function's status, graph breaks, recompiles and compile time
over three captured runs of one program, from the command line and in a docs page."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.comparing.trend import trend

from .conftest import DATA, SiteMaker, warnings_of
from .test_cli import run

RUNS = [DATA / "captured" / "trend" / v for v in ("v1", "v2", "v3")]


def test_each_function_over_the_runs() -> None:
    result = trend([load_trace(p) for p in RUNS], ["v1", "v2", "v3"])
    rows = {row.key.function: row for row in result.rows}
    step = rows["step"].cells
    assert [c.status for c in step] == ["break", "ok", "ok"]  # the print removed in v2
    # the print broke each of v1's 3 compiles: 3 graph breaks (1 kind, 1 place), as the
    # glance counts them
    assert [c.graph_breaks for c in step] == [3, 0, 0]
    assert [c.recompiles for c in step] == [2, 2, 0]  # one batch size in v3
    norm = rows["norm"].cells
    assert [c.graph_breaks for c in norm] == [0, 0, 1]  # v3's data-dependent branch
    assert not rows["torch_dynamo_resume_in_step"].cells[1].present  # gone with the break
    assert result.setup == []  # one machine, one torch: like for like


def test_diff_of_three_runs_prints_the_trend_and_judges_the_last_two() -> None:
    result = run("diff", *RUNS)
    assert result.returncode == 1  # v3 adds a graph break
    out = result.stdout
    assert out.startswith("trend over 3 runs: ")
    step_v1 = r"function program\.py:step\n  \S+v1: break, 3 graph breaks, 2 recompiles"
    assert re.search(step_v1, out)
    assert "the last two runs:" in out and "new graph break: GB0170 at program.py:norm" in out
    data = json.loads(run("diff", *RUNS, "--format", "json").stdout)
    assert len(data["trend"]["runs"]) == 3
    assert {r["function"] for r in data["trend"]["rows"]} >= {"step", "norm"}
    assert run("diff", RUNS[0]).returncode == 2  # one run: nothing to compare


PAGE = """:orphan:

Trend
=====

.. torchtrace-trend:: {runs}
   :labels: v1, v2, v3
"""


def test_the_trend_directive_builds_on_three_runs(make_site: SiteMaker, tmp_path: Path) -> None:
    runs = " ".join(f"@DATA@/captured/trend/{v}" for v in ("v1", "v2", "v3"))
    app = make_site(
        "simple",
        pages={"trend.rst": PAGE.format(runs=runs)},
        warningiserror=True,
        confoverrides={"nitpicky": True},
    )
    assert app.statuscode == 0 and warnings_of(app) == ""
    html = (Path(app.outdir) / "trend.html").read_text("utf-8")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert "4 function(s) over 3 runs, oldest first: v1, v2, v3" in text
    assert re.search(r"program\.py:step break 3 graph breaks, 2 recompiles, [\d.]+ s ok", text)
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="torchtrace-chart"') == 1
    assert "torchtrace-status-break" in html
    wrong = make_site(
        "simple",
        pages={
            "trend.rst": PAGE.format(runs=runs).replace(":labels: v1, v2, v3", ":labels: v1, v2")
        },
    )
    assert "torchtrace-trend takes 2 to 50 paths" in warnings_of(wrong)
