"""Issue 10's page content, on real logs: the answer first, where am I, folded long content,
whole failures, extern calls per site, and every artifact reachable."""

from __future__ import annotations

import re
import time
from pathlib import Path

from sphinx_torchtrace.site.artifacts import size_text
from sphinx_torchtrace.site.blocks import (
    Admonition,
    AnchorLink,
    Badge,
    Block,
    CodeBlock,
    Download,
    Dropdown,
    Lines,
    Link,
    PageLink,
    Section,
    Table,
    inline_text,
    linked,
    web_inlines,
)
from sphinx_torchtrace.site.pages.diffs import DIFF_OPEN_LINES, folded_diff
from sphinx_torchtrace.site.pages.frame import frame_page
from sphinx_torchtrace.site.pages.graph import graph_page
from sphinx_torchtrace.site.pages.kernel import kernel_page
from sphinx_torchtrace.site.pages.overview import overview_page, triage_blocks
from sphinx_torchtrace.site.plan import FramePlan, PageSettings, TracePlan, plan_trace
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.glance import triage
from sphinx_torchtrace.trace.analyses.graph_breaks import parse_message
from sphinx_torchtrace.trace.analyses.phases import compile_seconds

from .conftest import SiteMaker
from .test_hostile_values import page_text

DATA = Path(__file__).parent / "data"
SHARED = DATA / "shared"
GLOO = DATA / "captured" / "multi_rank_gloo"
DEFAULT = PageSettings()


def plan_of(path: Path, label: str) -> TracePlan:
    return plan_trace(label, load_trace(str(path)), "torchtrace", fold_bytes=0)


def frame_of(plan: TracePlan, label: str, rank: int | None = None) -> FramePlan:
    return next(
        f for f in plan.frames if f.compile.label == label and (rank is None or f.rank.rank == rank)
    )


def lines_of(blocks: list[Block], cls: str) -> list[str]:
    found = [b for b in blocks if isinstance(b, Lines) and cls in b.classes]
    return [inline_text(line) for b in found for line in b.lines]


# -- 1. triage first ----------------------------------------------------------------------------


def test_triage_counts_a_graph_break_once_not_with_its_restart() -> None:
    t = triage(load_trace(str(SHARED / "graph_breaks")))
    # 9 functions; 16 compile ids ([x/y] and the repeats after reset()); 27 attempts
    assert (t.frames, t.compile_ids, t.attempts) == (9, 16, 27)
    # torch logs each break twice (graph_break, then restart reasons): 11, not 22; distinct
    # by (registry id, user location): GB0025 at two places, GB0059, GB0124, GB0007
    assert (t.graph_breaks, t.graph_break_reasons, t.errors) == (11, 5, 0)
    assert t.cache == {"miss": 18}
    assert t.statuses == {"break": 11, "ok": 5} and t.divergence is None


def test_triage_lists_recompiles_per_function_and_errors() -> None:
    t = triage(load_trace(str(SHARED / "recompiles")))
    # limited_fn's [2/3] was refused past the recompile limit: no new version, no recompile
    assert t.recompiles == 11
    assert [(fn.function, len(fn.recompiles)) for fn in t.recompiled] == [
        ("static_fn", 4),
        ("auto_fn", 5),
        ("limited_fn", 2),
    ]
    assert [c.label for c in t.limit_hits] == ["[2/3]"]
    assert t.errors == 1  # the recompile limit
    assert t.compile_seconds is not None and 20 < t.compile_seconds < 40


def test_a_recompile_counts_by_its_id_and_under_the_function_it_compiled() -> None:
    """``[0/1] #5`` (after a reset) is a recompile, as its page says: the glance said
    "Recompiles: none" beside a frame page "Why it compiled again".  Its reason, logged
    before its dynamo_start, is its own (it was given to the occurrence before).  And
    frame ids start again after a reset: ``[0/*]`` compiled ``dtype_fn``, then ``f``, which
    were one function of 7 recompiles; a compile naming no function is its frame's latest."""
    backends = triage(load_trace(str(DATA / "corpus" / "backends")))
    (forward,) = backends.recompiled
    assert forward.function == "forward" and len(forward.recompiles) == 5
    assert [rc.compile.label for rc in forward.recompiles][-1] == "[0/1] #5"
    (reason,) = forward.recompiles[-1].reasons
    # the entry torch names is this run's [0/0] (#5), not the first run's
    assert reason.previous_label == "[0/0] #5" and "grad_mode" in reason.guard
    limit = triage(load_trace(str(DATA / "corpus" / "recompile_limit")))
    # dtype_fn's third dtype hit the limit at [0/2] (torch logged the reason, then refused:
    # no version, no recompile); f's own [0/2] after the reset is [0/2] #2, not dtype_fn's;
    # f's [0/6] hit accumulated_recompile_limit
    assert [(fn.function, len(fn.recompiles)) for fn in limit.recompiled] == [
        ("dtype_fn", 1),
        ("const_fn", 1),
        ("f", 5),
    ]
    assert [c.label for c in limit.limit_hits] == ["[0/2]", "[0/6]"]
    shared = triage(load_trace(str(SHARED / "recompiles")))
    assert [(fn.function, len(fn.recompiles)) for fn in shared.recompiled] == [
        ("static_fn", 4),
        ("auto_fn", 5),
        ("limited_fn", 2),
    ]


def test_overview_opens_with_the_answer_each_figure_a_link() -> None:
    plan = plan_of(SHARED / "recompiles", "big")
    page = overview_page(plan, DEFAULT)
    first = page.blocks[0]
    assert isinstance(first, Section) and first.anchor == "at-a-glance"
    said = lines_of(list(first.blocks), "torchtrace-triage")
    assert said[0] == "Compiled: 3 functions (15 compile ids, 15 attempts): 14 ok, 1 error"
    assert (
        "Recompiles: 11 recompiles: static_fn 4, auto_fn 5, limited_fn 2; the recompile "
        "limit refused 1 more (big/[2/3]): no new version"
    ) in said
    assert "Cache lookups: 28 misses" in said
    links = [x for b in first.blocks if isinstance(b, Lines) for ln in b.lines for x in ln]
    anchors = {x.anchor for x in links if isinstance(x, AnchorLink)}
    assert anchors == {
        "compile-directory",
        "recompiles-explained",
        "failures-and-restarts",
        "compile-caches",
        "compile-time",
    }
    present = {b.anchor for b in page.blocks if isinstance(b, Section)}
    assert anchors <= present  # every link lands on a section of the page
    assert Badge("error") in links


def test_several_ranks_show_the_divergence_first() -> None:
    plan = plan_of(GLOO, "dist")
    (glance,) = triage_blocks(plan, DEFAULT)
    assert isinstance(glance, Section)
    warning = glance.blocks[0]
    assert isinstance(warning, Admonition) and warning.kind == "warning"
    # on the user's own page: the same figures, with no section of ours in their document
    bare = triage_blocks(plan, DEFAULT, titled=False)
    assert not any(isinstance(b, Section) for b in bare) and isinstance(bare[0], Admonition)


def _rank_copies(dest: Path, source: Path, ranks: int) -> Path:
    """``ranks`` copies of a one-process log, as a job whose ranks ran the same program."""
    (log,) = source.glob("*.log")
    dest.mkdir()
    for r in range(ranks):
        (dest / f"dedicated_log_torch_trace_rank_{r}_x.log").write_bytes(log.read_bytes())
    return dest


def test_several_ranks_say_their_figures_add_up_the_ranks(tmp_path: Path) -> None:
    # Four ranks that ran the same program: the glance said "12 functions compiled" and
    # listed each recompiled function once per rank ("static_fn 4, auto_fn 5, limited_fn 3,
    # static_fn 4, ... and 4 more functions": there are 3), right under "All 4 ranks
    # compiled the same compile ids".
    plan = plan_of(_rank_copies(tmp_path / "job", SHARED / "recompiles", 4), "job")
    (glance,) = triage_blocks(plan, DEFAULT)
    assert isinstance(glance, Section)
    said = lines_of(list(glance.blocks), "torchtrace-triage")
    assert said == [
        "Compiled: 3 functions on each of the 4 ranks "
        "(60 compile ids, 60 attempts in all 4 ranks): 56 ok, 4 error",
        "Graph breaks: none",
        "Recompiles: 44 recompiles in all 4 ranks: static_fn 4 times on each rank, "
        "auto_fn 5 times on each rank, limited_fn 2 times on each rank; the recompile limit "
        "refused 4 more (job/rank0/[2/3], job/rank1/[2/3], job/rank2/[2/3], "
        "job/rank3/[2/3]): no new version",
        "Compile errors: 4 compile errors in all 4 ranks (1 kind, no place logged)",
        "Cache lookups: 112 misses in all 4 ranks",
        "Compile time: 114.6 s in all 4 ranks; 28.7 s on rank 0, the slowest",
    ]
    t = triage(plan.trace)
    assert t.frames == 12 and t.frames_per_rank == (3, 3)
    assert [(f.shown, f.per_rank) for f in t.recompiled_by_function] == [
        ("static_fn", [4] * 4),
        ("auto_fn", [5] * 4),
        ("limited_fn", [2] * 4),
    ]
    text = page_text(overview_page(plan, DEFAULT))
    assert "4 processes: 0-3" in text  # a thousand ranks are one run, not 1,000 numbers
    assert "4 ranks in 1 class of ranks that logged alike" in text
    assert "60 compile ids (60 attempts) in all 4 ranks: 56 ok, 4 error" in text


def test_log_sizes_are_the_files_and_say_their_text_where_it_differs() -> None:
    """A gzip log's size is the file's, with its text beside it (the file table showed the
    unpacked size beside the .gz name and its sha256); a text log of two ranks is one file,
    not two of its size each."""
    gz = page_text(overview_page(plan_of(DATA / "corpus" / "ddp_4ranks", "ddp"), DEFAULT))
    on_disk = sum(p.stat().st_size for p in (DATA / "corpus" / "ddp_4ranks").glob("*.gz"))
    assert f"4 files, {size_text(on_disk)} in all, 8.2 MiB of text (listed below)" in gz
    assert re.search(r"^36\d\.\d KiB \(2\.0 MiB unpacked\)$", gz, re.MULTILINE)
    log = DATA / "captured" / "torch_logs" / "ranks.log"
    from sphinx_torchtrace.trace.inputs.text_log import load_text_log

    trace = load_text_log(log, display_path=str(log))
    assert len(trace.ranks) == 2
    text = page_text(overview_page(plan_trace("ranks", trace, "torchtrace"), DEFAULT))
    assert f"{log} ({size_text(log.stat().st_size)}), sha256 " in text
    assert "The 1 log file" in text and "2 files" not in text


def test_ranks_that_differ_show_the_range_and_the_slowest_rank() -> None:
    plan = plan_of(DATA / "corpus" / "ddp_4ranks_divergent", "div")
    (glance,) = triage_blocks(plan, DEFAULT)
    assert isinstance(glance, Section)
    said = lines_of(list(glance.blocks), "torchtrace-triage")
    assert said[0].startswith("Compiled: 2 to 4 functions on each of the 4 ranks (10 compile ids")
    t = triage(plan.trace)
    per_rank = [
        sum(compile_seconds(c) or 0.0 for c in r.compiles if not c.id.is_unknown)
        for r in plan.trace.ranks
    ]
    assert t.slowest is not None and t.slowest[1] == max(per_rank)
    assert t.slowest[0] == plan.trace.ranks[per_rank.index(max(per_rank))].rank
    assert said[-1].endswith(f"; {t.slowest[1]:.1f} s on rank {t.slowest[0]}, the slowest")
    (gloo,) = triage_blocks(plan_of(GLOO, "dist"), DEFAULT)
    assert isinstance(gloo, Section)
    two = lines_of(list(gloo.blocks), "torchtrace-triage")
    assert two[0].startswith("Compiled: 5 functions on each of the 2 ranks (")
    assert "in both ranks" in two[0]


def test_the_directive_shows_the_summary_on_its_own_page(make_site: SiteMaker) -> None:
    app = make_site("multi", "html")
    html = (app.outdir / "training.html").read_text(encoding="utf-8")
    assert "torchtrace-triage" in html and "Compiled: " in html
    assert 'href="torchtrace/training/index.html#compile-directory"' in html


# -- 2. where am I ------------------------------------------------------------------------------


def test_titles_name_trace_rank_and_page() -> None:
    plan = plan_of(GLOO, "dist")
    frame = frame_of(plan, "[0/0]", rank=1)
    assert inline_text(frame_page(plan, frame, DEFAULT).title) == "dist · rank1 · [0/0] inner"
    unknown = next(f for f in plan.frames if f.compile.id.is_unknown)
    title = inline_text(frame_page(plan, unknown, DEFAULT).title)
    assert title == "dist · rank0 · [-/-] records without a compile id"
    single = plan_of(SHARED / "training", "big")
    f = frame_of(single, "[0/0]")
    assert inline_text(frame_page(single, f, DEFAULT).title) == "big · [0/0] forward"
    graph = next(g for g in f.graphs if g.artifact.name == "dynamo_output_graph")
    assert inline_text(graph_page(single, f, graph, DEFAULT).title) == (
        "big · [0/0] · dynamo_output_graph"
    )
    kernel = f.kernels[0]
    page = kernel_page(single, f, kernel, DEFAULT)
    assert inline_text(page.title) == f"big · [0/0] · {kernel.kernel.name}"
    # trace › frame › graph › kernel
    (crumbs,) = [
        b for b in page.blocks if isinstance(b, Lines) and "torchtrace-breadcrumbs" in b.classes
    ]
    line = crumbs.lines[0]
    assert inline_text(line) == f"big › [0/0] forward › inductor_output_code › {kernel.kernel.name}"
    assert [x.docname for x in line if isinstance(x, PageLink)] == [
        single.index_docname,
        f.docname,
        kernel.code.docname if kernel.code else None,
    ]


def test_previous_and_next_frames_in_compile_order() -> None:
    plan = plan_of(SHARED / "recompiles", "big")
    page = frame_page(plan, frame_of(plan, "[0/3]"), DEFAULT)
    navs = [b for b in page.blocks if isinstance(b, Lines) and "torchtrace-prev-next" in b.classes]
    assert len(navs) == 2 and navs[0] == navs[-1] == page.blocks[-1]  # at the top and the bottom
    assert inline_text(navs[0].lines[0]) == (
        "big overview · previous: [0/2] static_fn · next: [0/4] static_fn"
    )
    targets = [x.docname for x in navs[0].lines[0] if isinstance(x, PageLink)]
    assert targets == [
        plan.index_docname,
        frame_of(plan, "[0/2]").docname,
        frame_of(plan, "[0/4]").docname,
    ]


# -- 3. long content folded ---------------------------------------------------------------------


def test_a_long_diff_shows_its_first_hunks_and_folds_the_rest() -> None:
    hunks = [
        f"@@ -{i * 20},7 +{i * 20},7 @@\n ctx\n ctx\n ctx\n-old {i}\n+new {i}\n ctx\n ctx\n ctx"
        for i in range(60)
    ]
    diff = "--- a\n+++ b\n" + "\n".join(hunks)
    blocks = folded_diff(diff)
    shown, rest = blocks
    assert isinstance(shown, CodeBlock) and len(shown.text.split("\n")) <= DIFF_OPEN_LINES
    assert shown.text.startswith("--- a\n+++ b\n@@ -0,7")
    assert isinstance(rest, Dropdown)
    title = inline_text(rest.title)
    assert title.startswith("The rest of the diff: ") and "more hunks" in title
    (folded,) = rest.blocks
    assert isinstance(folded, CodeBlock)
    assert shown.text + "\n" + folded.text == diff  # nothing lost, nothing repeated
    # one long hunk: its first lines open, the rest folded
    long_hunk = "--- a\n+++ b\n@@ -1,77 +1,77 @@\n" + "\n".join(f"-a{i}\n+b{i}" for i in range(37))
    head, tail = folded_diff(long_hunk)
    assert isinstance(head, CodeBlock) and len(head.text.split("\n")) == DIFF_OPEN_LINES
    assert isinstance(tail, Dropdown) and "(37 lines)" in inline_text(tail.title)
    small = "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y"
    assert folded_diff(small) == [CodeBlock(small, "diff")]


def test_frame_page_puts_the_answer_then_figures_then_long_blocks() -> None:
    plan = plan_of(SHARED / "recompiles", "big")
    page = frame_page(plan, frame_of(plan, "[0/3]"), DEFAULT)
    order = [b.anchor for b in page.blocks if isinstance(b, Section)]
    # why it compiled again first: a long kernel table never pushes it off the first screens
    assert order[0] == "changed"
    assert order.index("changed") < order.index("metrics") < order.index("artifacts")
    assert order.index("artifacts") < order.index("kernels") < order.index("stack")


# -- 5. failures and kernels --------------------------------------------------------------------


def test_chained_failures_are_found_and_addresses_linked() -> None:
    reason = (
        "Graph break under GenericContextWrappingVariable\n  Explanation: see "
        "https://pytorch.org/docs/x.html.\n\n"
        "*** While handling this graph break, another graph break occurred: ***\n\n"
        "Data-dependent branching\n  Explanation: y\n"
    )
    parts = parse_message(reason).parts
    assert [p.type for p in parts] == [
        "Graph break under GenericContextWrappingVariable",
        "Data-dependent branching",
    ]
    pieces = linked("Explanation: see https://pytorch.org/docs/x.html. or javascript:alert(1)")
    assert pieces == [
        "Explanation: see ",
        Link("https://pytorch.org/docs/x.html", "https://pytorch.org/docs/x.html"),
        ". or javascript:alert(1)",
    ]
    start = time.perf_counter()
    linked("http://" + "a" * 200_000 + " https:// " * 20_000)  # hostile: stays linear
    assert time.perf_counter() - start < 1.0


def test_graph_break_reasons_link_their_addresses_in_the_frame_page() -> None:
    plan = plan_of(SHARED / "graph_breaks", "gb")
    page = frame_page(plan, frame_of(plan, "[0/0]"), DEFAULT)
    failures = next(b for b in page.blocks if isinstance(b, Section) and b.anchor == "failures")
    links = [
        x
        for b in failures.blocks
        if isinstance(b, Lines)
        for ln in b.lines
        for x in ln
        if isinstance(x, Link)
    ]
    assert links and links[0].url.startswith("https://meta-pytorch.github.io/")


def test_an_extern_kernel_is_one_row_with_its_calls_counted() -> None:
    plan = plan_of(SHARED / "training", "big")
    frame = frame_of(plan, "[0/0]")
    externs = [k for k in frame.kernels if k.kernel.kind == "extern"]
    assert externs and any(len(k.kernel.launch_lines) > 1 for k in externs)
    for k in externs:
        assert len(k.kernel.call_nodes) == len(k.kernel.launch_lines)
    page = frame_page(plan, frame, DEFAULT)
    kernels = next(b for b in page.blocks if isinstance(b, Section) and b.anchor == "kernels")
    table = kernels.blocks[-1]
    if isinstance(table, Dropdown):  # a long table is folded whole
        (table,) = table.blocks
    assert isinstance(table, Table)
    extern_rows = [r for r in table.rows if inline_text(r[1]).startswith("extern")]
    assert len(extern_rows) == len(externs)  # a layer's 200 calls are not 200 rows
    for row, k in zip(extern_rows, externs, strict=True):
        calls = len(k.kernel.launch_lines)
        assert inline_text(row[1]) == (f"extern, {calls} calls" if calls > 1 else "extern")
        lines = ", ".join(str(n) for n in k.kernel.launch_lines)
        assert inline_text(row[2]).endswith(f" {lines}")
        first = next((call[0] for call in k.kernel.call_nodes if call), None)
        assert first is None or inline_text(row[3]).startswith(first)  # the calls' nodes


def test_kernel_page_shows_its_source_before_its_launches() -> None:
    plan = plan_of(SHARED / "training", "big")
    frame = frame_of(plan, "[0/0]")
    kernel = next(k for k in frame.kernels if k.kernel.kind != "extern")
    page = kernel_page(plan, frame, kernel, DEFAULT)
    order = [b.anchor for b in page.blocks if isinstance(b, Section)]
    assert order.index("source") < order.index("launches")


# -- 6. every artifact reachable ----------------------------------------------------------------


def test_artifacts_too_large_to_show_are_downloads(make_site: SiteMaker) -> None:
    plan = plan_of(SHARED / "training", "training")
    frame = frame_of(plan, "[0/0]")
    (big, *_) = frame.downloads
    assert big.artifact.name == "fx_graph_cache_miss" and big.artifact.size > 32768
    page = frame_page(plan, frame, DEFAULT)
    artifacts = next(b for b in page.blocks if isinstance(b, Section) and b.anchor == "artifacts")
    table = artifacts.blocks[1]
    if isinstance(table, Dropdown):  # a long table is folded whole
        (table,) = table.blocks
    assert isinstance(table, Table)
    (row,) = [
        r
        for r in table.rows
        if any(isinstance(x, Download) and x.path == big.raw_path for x in web_inlines(r[-1]))
    ]
    assert inline_text(row[-1]) == "raw" and inline_text(row[0]) == "fx_graph_cache_miss"
    app = make_site("multi", "html")
    page_file = app.outdir / f"{frame.docname}.html"
    html = page_file.read_text(encoding="utf-8")
    assert "artifact-fx-graph-cache-miss.json" in html and 'class="reference download' in html
    # the download is written into the output, where its link points
    (href,) = set(re.findall(r'href="([^"]*artifact-fx-graph-cache-miss\.json)"', html))
    written = page_file.parent / href
    assert written.read_text(encoding="utf-8") == big.artifact.text()
