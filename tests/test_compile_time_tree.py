"""Where the compile time went (issue 55): the tree file → function → compile → phase.

On every bundled log the tree's root is the glance's compile time and every compile's
phases add up to its own metric; the phases come from the log's spans, each leaf naming its
records; the HTML shows the icicle and a table whose compile cells link to real pages; the
other builders show the table; ``summary --json`` carries the same tree.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses import compile_time as ct
from sphinx_torchtrace.trace.analyses.glance import triage
from sphinx_torchtrace.trace.analyses.phases import compile_seconds

from .conftest import DATA, SiteMaker
from .test_site_invariants import all_traces

WARM = DATA / "shared" / "cache" / "run2" / "dedicated_log_torch_trace_kw2fzx_u.log"
COLD = DATA / "shared" / "cache" / "run1" / "dedicated_log_torch_trace_ecrobrij.log"
METRICS_ONLY = DATA / "shared" / "tlparse-inputs" / "inputs" / "links.log"


@pytest.mark.parametrize("rel", all_traces())
def test_the_root_is_the_glance_compile_time_and_every_compile_adds_up(rel: str) -> None:
    trace = load_trace(DATA / rel)
    root = ct.compile_time_tree(trace)
    glance = triage(trace).compile_seconds
    assert root.seconds == pytest.approx(glance or 0.0, abs=1e-9), rel
    compiles = [n for n in ct._walk(root) if n.kind == "compile"]
    for node in compiles:
        assert node.compile is not None
        assert node.seconds == compile_seconds(node.compile)  # the record's figure
        assert sum(leaf.seconds for leaf in node.children) == pytest.approx(node.seconds)
        for leaf in node.children:
            assert leaf.phase in ct.PHASE_WORDS and leaf.seconds >= 0
            assert leaf.sources and all(s.line >= 1 for s in leaf.sources), (rel, leaf)
    assert len(compiles) == sum(
        1
        for r in trace.ranks
        for c in r.compiles
        if not c.id.is_unknown and compile_seconds(c) is not None
    )


def test_phases_are_the_spans_of_torch_timers_each_instant_once() -> None:
    """The cold run's C++ compilation is the time inside its ``compile_file`` and
    ``async_compile.wait`` spans (lines of the log), not a share of anything."""
    root = ct.compile_time_tree(load_trace(COLD))
    totals = ct.phase_totals(root)
    assert "unattributed" not in totals  # the frame spans are the metric, to the µs
    assert totals["compile"] > 0.5 * root.seconds  # the cold run compiles C++ for most of it
    leaf = next(n for n in root.leaves() if n.phase == "compile")
    lines = COLD.read_text(encoding="utf-8").splitlines()
    for source in leaf.sources:
        name = source.what.split(" ×")[0]
        assert '"chromium_event"' in lines[source.line - 1], source  # the span's own record
        assert f'"name": "{name}"' in lines[source.line + 1], source


def test_metrics_alone_split_the_frame_by_its_nested_figures() -> None:
    root = ct.compile_time_tree(load_trace(METRICS_ONLY))
    leaves = root.leaves()
    assert {leaf.phase for leaf in leaves} <= {"dynamo", "backend", "inductor", "code_gen"}
    what = " ".join(s.what for leaf in leaves for s in leaf.sources)
    assert "entire_frame_compile_time_s − backend_compile_time_s" in what


def test_a_frame_figure_alone_is_not_attributed_rather_than_guessed() -> None:
    split = ct._metric_split({"entire_frame_compile_time_s": 3.0}, 7, "")
    assert split == {}  # nothing says where the 3 s went: the tree says "not attributed"


def test_the_warm_start_that_still_compiled_is_remarked_with_its_records() -> None:
    root = ct.compile_time_tree(load_trace(WARM))
    warm = [r for r in ct.remarks(root) if r.kind == "warm_compile"]
    assert warm and all("hit the cache" in r.text for r in warm)
    whats = {s.what.split(" ×")[0] for r in warm for s in r.records}
    assert {"fx_graph_cache_hit", "compile_file"} <= whats
    # the cold run hit no cache: no such remark
    assert not [
        r for r in ct.remarks(ct.compile_time_tree(load_trace(COLD))) if r.kind == "warm_compile"
    ]


def test_no_remark_without_its_cause() -> None:
    simple = DATA / "shared" / "simple" / "dedicated_log_torch_trace_5aek85xk.log"
    assert ct.remarks(ct.compile_time_tree(load_trace(simple))) == []


def _site(make_site: SiteMaker, builder: str, log: Path) -> SphinxTestApp:
    page = (
        f"Warm\n====\n\n.. torchtrace:: @DATA@/{log.relative_to(DATA).as_posix()}\n   :name: warm\n"
    )
    return make_site("simple", builder, pages={"index.rst": page})


def test_html_draws_the_icicle_and_links_every_compile_cell_to_its_page(
    make_site: SiteMaker,
) -> None:
    app = _site(make_site, "html", WARM)
    out = Path(app.outdir)
    overview = next(p for p in out.rglob("*.html") if "compile-time-by-source" in p.read_text())
    html = overview.read_text(encoding="utf-8")
    section = html[html.index('id="compile-time-by-source"') :]
    assert "torchtrace-icicle" in section and "<rect" in section
    svg = section[section.index("<svg") : section.index("</svg>")]
    assert "cache.py" in svg and "/home/user" not in svg  # no folder of the machine
    table = section[section.index("torchtrace-compile-time") :]
    table = table[: table.index("</table>")]
    hrefs = re.findall(r'href="([^"#]+)', table)
    assert hrefs
    for href in hrefs:  # every compile of the table links to a page the build wrote
        assert (overview.parent / href).resolve().is_file(), href
    assert "compile_file" in table and re.search(r"line \d+", table)


@pytest.mark.parametrize("builder", ["latex", "epub", "text"])
def test_other_builders_show_the_table(make_site: SiteMaker, builder: str) -> None:
    app = _site(make_site, builder, WARM)
    text = "".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in Path(app.outdir).rglob("*")
        if p.suffix in {".tex", ".xhtml", ".txt"}
    )
    text = re.sub(r"\\sphinxtorchtracebreak\{\}", "", text).replace("\\_", "_")  # LaTeX
    assert "Where the compile time went" in text
    assert "compile_file" in text and "Cache lookups and loads" in text
    assert "torchtrace.chart" not in app.warning.getvalue()


def test_summary_json_carries_the_tree() -> None:
    from sphinx_torchtrace.cli import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["summary", str(WARM), "--json"])
    assert code in (0, None)
    tree = json.loads(buffer.getvalue())["compile_time"]
    glance = triage(load_trace(WARM)).compile_seconds
    assert tree["tree"]["seconds"] == pytest.approx(glance, abs=1e-6)
    assert tree["seconds"] == pytest.approx(glance, abs=1e-6)
    assert tree["phases"]["cache"] > 0
    assert tree["functions"][0]["function"] == "forward"
    assert any(r["kind"] == "warm_compile" for r in tree["remarks"])
