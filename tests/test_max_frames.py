"""``torchtrace_max_frames``: a trace of many compiles gets pages for the first ones only.

The log is the bundled ``simple`` log's compile repeated under 12 compile ids
(``tests/tools/many_ids_log.py``), each with a graph, generated code and a kernel.
"""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import sphinx_torchtrace.site as site_package
from sphinx_torchtrace.site.pages import build_page
from sphinx_torchtrace.site.plan import PageSettings, plan_trace
from sphinx_torchtrace.trace import load_trace

from .conftest import SiteMaker, inventory, warnings_of, write_page
from .tools.many_ids_log import WITH_GRAPHS, write_many_ids_log

PAGE = """Many compiles
=============

.. torchtrace:: many.log
   :name: many
"""


def limit_warnings(warnings: str) -> list[str]:
    return [line for line in warnings.splitlines() if "[torchtrace.limit]" in line]


def site_of(make_site: SiteMaker, tmp_path: Path, **conf: Any) -> Any:
    app = make_site("simple", "html", build=False, confoverrides=conf)
    write_many_ids_log(Path(app.srcdir) / "many.log", 12, WITH_GRAPHS)
    write_page(Path(app.srcdir), "index.rst", PAGE)
    return app


def test_frames_past_the_limit_are_listed_without_pages(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    app = site_of(make_site, tmp_path)
    app = make_site(
        "simple", "html", srcdir=Path(app.srcdir), confoverrides={"torchtrace_max_frames": 5}
    )
    warnings = warnings_of(app)
    (warning,) = limit_warnings(warnings)
    assert "index.rst" in warning  # located at the directive
    assert "12 compiles" in warning and "the first 5" in warning and "7 are only listed" in warning
    assert "torchtrace_max_frames" in warning
    index = (app.outdir / "index.html").read_text(encoding="utf-8")
    # the directive says the glance's figures, over every compile (past the limit too); the
    # records outside any compile are no compilation
    said = html.unescape(re.sub(r"<[^>]+>", "", index))
    assert "Trace many, at a glance:" in said
    assert "12 functions (12 compile ids, 12 attempts): 12 ok" in said
    assert "WARNING" not in warnings.replace(warning, "")  # nothing else to say

    frames = inventory(app)["frame"]
    # records outside any compilation keep their page, not counted
    assert sorted(frames) == ["many/[-/-]"] + [f"many/[{i}/0]" for i in range(5)]
    graphs = inventory(app).get("graph", {})
    assert graphs and all(re.match(r"many/\[[0-4]/0\]/", name) for name in graphs)

    overview = (app.outdir / "torchtrace/many/index.html").read_text(encoding="utf-8")
    table = overview[overview.index('id="frames-past-the-limit"') :]
    assert "torchtrace_max_frames = 5" in table
    for i in range(5, 12):
        assert f"[{i}/0]" in table and f"forward_{i}" in table
        assert f"frame-{i}-0" not in overview  # no page, no link
    assert not (Path(app.srcdir) / "torchtrace/many/frame-5-0.rst").exists()
    assert (Path(app.srcdir) / "torchtrace/many/frame-4-0.rst").exists()


def test_raising_the_limit_gives_every_frame_its_pages_and_downloads(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    app = site_of(make_site, tmp_path)
    srcdir = Path(app.srcdir)
    paged = {"torchtrace_fold_bytes": 0}  # every graph a page and a download
    make_site("simple", "html", srcdir=srcdir, confoverrides={"torchtrace_max_frames": 5, **paged})
    app = make_site(
        "simple",
        "html",
        srcdir=srcdir,
        freshenv=False,
        confoverrides={"torchtrace_max_frames": 20, **paged},
    )
    assert not limit_warnings(warnings_of(app))
    assert len(inventory(app)["frame"]) == 12 + 1
    overview = (app.outdir / "torchtrace/many/index.html").read_text(encoding="utf-8")
    assert "frames-past-the-limit" not in overview
    frame = app.outdir / "torchtrace/many/frame-11-0.html"
    links = re.findall(r'href="([^"#]*_downloads/[^"#]+)"', frame.read_text(encoding="utf-8"))
    assert links and all((frame.parent / html.unescape(h)).is_file() for h in links)
    assert not (srcdir / "torchtrace/many/_raw").exists()  # written into the output only


def test_the_default_limit_and_a_bad_value(make_site: SiteMaker, tmp_path: Path) -> None:
    app = site_of(make_site, tmp_path)
    app = make_site(
        "simple", "html", srcdir=Path(app.srcdir), confoverrides={"torchtrace_max_frames": 0}
    )
    warnings = warnings_of(app)
    assert "torchtrace_max_frames = 0 must be a whole number above 0; using 1000" in warnings
    assert not limit_warnings(warnings)
    assert len(inventory(app)["frame"]) == 12 + 1


def test_several_ranks_keep_their_first_compiles(tmp_path: Path) -> None:
    """The cap takes each rank's n-th compile before any rank's (n+1)-th; a compile shown
    on an earlier rank's pages (it logged the same) costs no page, so it does not count."""
    from .tools.hostile_log import format_record, read_records

    logs = tmp_path / "trace"
    logs.mkdir()
    for rank in (0, 1):
        text = write_many_ids_log(tmp_path / f"r{rank}.log", 6).read_text(encoding="utf-8")
        prefixed = "".join(
            line if line.startswith("\t") else f"[rank{rank}]:{line}"
            for line in text.splitlines(keepends=True)
        )
        (logs / f"dedicated_log_torch_trace_rank_{rank}_x.log").write_text(prefixed, "utf-8")
    trace = load_trace(logs)
    assert len(trace.ranks) == 2
    plan = plan_trace("run", trace, "torchtrace", max_frames=5)
    paged = [
        (f.rank is trace.ranks[1], f.compile.label, f.same_as is not None)
        for f in plan.frames
        if not f.compile.id.is_unknown
    ]
    # alike ranks: rank 1's compiles are rank 0's pages, so rank 0 keeps 5 of its own
    assert paged == [(False, f"[{i}/0]", False) for i in range(5)] + [
        (True, f"[{i}/0]", True) for i in range(5)
    ]
    assert len(plan.past_limit) == 2

    # rank 1 compiled from other lines: its compiles need pages, the cap shares them out
    log = logs / "dedicated_log_torch_trace_rank_1_x.log"
    records = read_records(log)
    for record in records:
        if record.kind == "dynamo_start":
            record.envelope["dynamo_start"]["stack"][-1]["line"] += 1000
    log.write_text("".join(format_record(r) for r in records), encoding="utf-8")
    trace = load_trace(logs)
    plan = plan_trace("run", trace, "torchtrace", max_frames=5)
    paged = [
        (f.rank is trace.ranks[1], f.compile.label)
        for f in plan.frames
        if not f.compile.id.is_unknown
    ]
    assert paged == [(False, "[0/0]"), (False, "[1/0]"), (False, "[2/0]")] + [
        (True, "[0/0]"),
        (True, "[1/0]"),
    ]
    assert len(plan.past_limit) == 7
    overview = build_page(plan, plan.index_docname, PageSettings())
    assert "Frames past the limit" in repr(overview)


def lines_run_in_the_site(work: Callable[[], object]) -> int:
    """Python lines executed in sphinx_torchtrace/site while ``work`` runs: a count, not a time."""
    package = str(Path(site_package.__file__).parent)
    count = 0

    def local(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def calls(frame: FrameType, event: str, arg: object) -> Any:
        return local if frame.f_code.co_filename.startswith(package) else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        work()
    finally:
        sys.settrace(previous)
    return count


def test_plan_and_pages_cost_linear_work_in_the_compile_ids(tmp_path: Path) -> None:
    def every_page(n: int) -> Callable[[], object]:
        trace = load_trace(write_many_ids_log(tmp_path / f"ids-{n}.log", n))

        def work() -> None:
            plan = plan_trace("run", trace, "torchtrace", max_frames=n)
            for docname in plan.docnames:
                build_page(plan, docname, PageSettings(sidebar_limit=0))

        return work

    small = lines_run_in_the_site(every_page(60))
    large = lines_run_in_the_site(every_page(240))
    assert large < 4.5 * small  # 4x the compiles; a scan of every frame per page made it ~13x
