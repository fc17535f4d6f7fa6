"""The overview page's view (``site/pages/overview/``) on real logs, as blocks a reader sees."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest

from sphinx_torchtrace.site.blocks import (
    Admonition,
    AnchorLink,
    Badge,
    Block,
    BulletList,
    Code,
    CodeBlock,
    Download,
    Dropdown,
    Link,
    ObjectLink,
    Page,
    PageLink,
    Paragraph,
    Section,
    Strong,
    Table,
    TabSet,
    Target,
    Toctree,
    inline_text,
)
from sphinx_torchtrace.site.pages.overview import overview_page
from sphinx_torchtrace.site.pages.overview.trie import TRIE_MAX_NESTING
from sphinx_torchtrace.site.pages.overview.view import duration_text
from sphinx_torchtrace.site.plan import PageSettings, TracePlan, plan_trace
from sphinx_torchtrace.trace import load_trace

DATA = Path(__file__).parent / "data"
SHARED = DATA / "shared"
INPUTS = SHARED / "tlparse-inputs" / "inputs"
EXPORT_LOG = DATA / "captured" / "draft_export" / "dedicated_log_torch_trace_j5am_2yg.log"
PER_RANK_ANCHORS = [
    "where-compilations-start",
    "compile-directory",
    "failures-and-restarts",
    "recompiles-explained",
    "compile-caches",
    "compile-time",
]


def build(path: Path, **settings: Any) -> tuple[TracePlan, Page]:
    plan = plan_trace("t", load_trace(path), "torchtrace")
    return plan, overview_page(plan, PageSettings(**settings))


# -- walking the block tree -------------------------------------------------------------------


def everything(value: object) -> Iterator[object]:
    """Every block, inline piece and string reachable from ``value``."""
    yield value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from everything(getattr(value, f.name))
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from everything(v)


def of_type(value: object, kind: type[Any]) -> list[Any]:
    return [v for v in everything(value) if isinstance(v, kind)]


def strings(page: Page) -> list[str]:
    return [v for v in everything(page) if isinstance(v, str)]


def sections(page: Page) -> dict[str, Section]:
    return {b.anchor or "": b for b in page.blocks if isinstance(b, Section)}


def anchors(page: Page) -> list[str]:
    return [a for a in sections(page) if a != "charts"]  # charts: another view's, optional


def table(blocks: object, first_header: str) -> Table:
    (found,) = [t for t in of_type(blocks, Table) if list(t.header[:1]) == [first_header]]
    return found


def texts(blocks: object) -> list[str]:
    return [inline_text(p.content) for p in of_type(blocks, Paragraph)]


def nesting(bullets: BulletList) -> int:
    inner = [nesting(b) for item in bullets.items for b in item if isinstance(b, BulletList)]
    return 1 + max(inner, default=0)


def items(bullets: BulletList) -> list[str]:
    """Each item's first paragraph, in pre-order."""
    out: list[str] = []
    for item in bullets.items:
        for b in item:
            if isinstance(b, Paragraph):
                out.append(inline_text(b.content))
            elif isinstance(b, BulletList):
                out.extend(items(b))
    return out


# -- one log ----------------------------------------------------------------------------------


def test_sections_in_template_order() -> None:
    plan, page = build(SHARED / "compile_error")
    assert page.docname == plan.index_docname and inline_text(page.title) == "Trace t"
    assert anchors(page) == [
        "at-a-glance",
        "status-legend",
        "where-compilations-start",
        "compile-directory",
        "failures-and-restarts",
        "compile-caches",
        "compile-time-by-source",
        "compile-time",
        "timeline",
        "frames",
    ]
    titles = [inline_text(s.title) for s in page.blocks if isinstance(s, Section)]
    assert "Timeline (chromium events)" in titles and "Status legend" in titles
    if "charts" in sections(page):  # right after the directory, as the template included it
        keys = list(sections(page))
        assert keys.index("charts") == keys.index("compile-directory") + 1
    # the answer first, then the header, unsectioned; the frames' toctree comes last, in a
    # section of its own (themes nest a toctree after the last section under that section)
    assert isinstance(page.blocks[0], Section) and page.blocks[0].anchor == "at-a-glance"
    assert isinstance(page.blocks[1], Paragraph) and "TORCH_TRACE" in strings(page.blocks[1])
    assert isinstance(page.blocks[2], Target) and page.blocks[2].anchor == "header"
    frames = page.blocks[-1]
    assert isinstance(frames, Section) and inline_text(frames.title) == "Frames"
    last = frames.blocks[0]
    assert isinstance(last, Toctree)
    # by compile id, without the records outside any compilation ([-/-]: no compilation)
    assert list(last.docnames) == [f.docname for f in plan.listed_frames]
    assert len(plan.listed_frames) == len(plan.frames) - 1


def test_header_facts() -> None:
    plan, page = build(SHARED / "recompiles")
    (header,) = of_type(page.blocks[1:4], Table)
    assert not header.header  # facts, one per row: no header row
    facts = {inline_text(row[0]): row[1] for row in header.rows}
    assert list(facts) == [
        "PyTorch",
        "Ranks",
        "Captured",
        "Log",
        "Compilations",
        "Settings",
        "Report",
    ]
    assert inline_text(facts["PyTorch"]).startswith("2.13.0+cpu (commit ")
    assert inline_text(facts["Ranks"]) == "single process"
    captured = inline_text(facts["Captured"])
    assert "the log records month and day, not the year" in captured
    assert captured.startswith("Nov 21 11:52:03 to ") and " (28.7 s); " in captured
    assert re.search(r" MiB\), sha256 [0-9a-f]{64}$", inline_text(facts["Log"]))
    # the glance's figures: compile ids and attempts, [-/-] not counted as a compilation
    assert inline_text(facts["Compilations"]) == "15 compile ids (15 attempts): 14 ok, 1 error"
    assert Code("recompile_limit") in facts["Settings"]
    (dropdown,) = [b for b in page.blocks if isinstance(b, Dropdown)]
    assert inline_text(dropdown.title).startswith("Full compile configuration (of the first")
    (code,) = dropdown.blocks
    assert isinstance(code, CodeBlock) and code.language == "json"
    assert "dynamo_config" in json.loads(code.text)


def test_duration_text() -> None:
    """The header says how long a log ran in what a reader takes in; the model keeps seconds."""
    assert duration_text(None) == "—"
    assert duration_text(28.66) == "28.7 s"
    assert duration_text(303) == "5 min 3 s"
    assert duration_text(2 * 3600 + 420) == "2 h 7 min"
    assert duration_text(141 * 86400) == "141 days"


def test_status_legend_shows_badges() -> None:
    _, page = build(SHARED / "simple")
    legend = table(sections(page)["status-legend"], "Status")
    assert list(legend.header) == ["Status", "tlparse's legend", "What it means"]
    assert [row[0] for row in legend.rows] == [
        [Badge(s)] for s in ("ok", "break", "error", "empty", "missing")
    ]


def test_directory_links_every_frame_of_the_plan() -> None:
    plan, page = build(SHARED / "compile_error")
    directory = table(sections(page)["compile-directory"], "Compile id")
    assert list(directory.header) == [
        "Compile id",
        "Function",
        "Status",
        "Time",
        "Graphs",
        "Kernels",
        "Cache",
        "Artifacts",
    ]
    links = [
        [ObjectLink("frame", f.name)]
        if plan.badge_status(f) == f.compile.status
        else [PageLink(f.docname, f.compile.label)]
        for f in plan.frames
    ]
    assert [row[0] for row in directory.rows] == links[:-1]  # [-/-] below the table
    assert plan.frames[-1].compile.id.is_unknown
    assert "t/[0/0]#2" in [f.name for f in plan.frames]  # the repeat after reset() has its own
    names = {f.name for f in plan.frames}
    everywhere = of_type(page, ObjectLink)
    assert all(link.objtype == "frame" and link.name in names for link in everywhere)


def test_failures_keep_trace_text_as_it_is() -> None:
    _, page = build(SHARED / "graph_breaks")
    failures = sections(page)["failures-and-restarts"]
    # a graph break and the restart torch logs after it are one event, counted once
    # 4 kinds of break (registry ids), one of them at two lines: 5 rows
    assert "11 graph breaks (4 kinds, 5 places)." in texts(failures)
    rows = table(failures, "Kind").rows
    assert list(table(failures, "Kind").header) == [
        "Kind",
        "Reason",
        "Count",
        "Compile ids and places",
    ]
    # backquotes of the reason are text, not markup, and not escaped
    # one row per break and place: the same break at two lines is two rows
    explicit = [
        r
        for r in rows
        if r[0] == ["Graph break"] and Strong("Call to `torch._dynamo.graph_break()`") in r[1]
    ]
    assert [inline_text(r[2]) for r in explicit] == ["4", "2"]
    (doc,) = of_type(explicit[1][1], Link)  # the registry id, linked to PyTorch's page
    assert doc.url.startswith("https://") and doc.url.endswith("/gb0025.html")
    assert doc.text == "GB0025"
    assert Code("/home/user/project/graph_breaks.py:19") in explicit[1][3]
    assert sum(isinstance(p, ObjectLink) for p in explicit[1][3]) == 2


def test_recompiles_are_explained() -> None:
    _, page = build(SHARED / "recompiles")
    recompiles = sections(page)["recompiles-explained"]
    intro = texts(recompiles)[0]
    assert "recompile_limit versions (8, later 3 in this run)" in intro
    assert "static_fn ([0/*]): 5 versions, 4 recompiles." in texts(recompiles)
    merged, first = of_type(recompiles, Table)[:2]
    # identical reasons merged across functions, with counts
    assert list(merged.header)[1:] == ["Recompiles", "Functions", "New versions"]
    by_reason = {inline_text(r[0]): (inline_text(r[1]), inline_text(r[2])) for r in merged.rows}
    assert by_reason["an input tensor has a different shape"] == ("4", "static_fn ×2, auto_fn ×2")
    assert list(first.header) == [
        "New version",
        "Did not fit",
        "Failed check (guard)",
        "In plain words",
    ]
    assert first.rows[0][:2] == [[ObjectLink("frame", "t/[0/1]")], [ObjectLink("frame", "t/[0/0]")]]
    assert isinstance(first.rows[0][2][0], Code)
    assert first.rows[0][3] == ["an input tensor has a different shape"]
    # no recompile, no section
    assert "recompiles-explained" not in sections(build(SHARED / "compile_error")[1])


def test_chromium_events_download() -> None:
    plan, page = build(SHARED / "training")
    (download,) = of_type(sections(page)["timeline"], Download)
    assert download == Download(f"{plan.root}/_raw/chromium-events.json", "chromium-events.json")
    assert "355 events, chromium-events.json" in texts(sections(page)["timeline"])


# -- several ranks ----------------------------------------------------------------------------


def test_each_rank_has_its_synchronized_tab() -> None:
    plan, page = build(INPUTS / "multi_rank_logs")
    for anchor in PER_RANK_ANCHORS:
        (tabs,) = [b for b in sections(page)[anchor].blocks if isinstance(b, TabSet)]
        # ranks 0 and 2 logged alike: one tab for both (a thousand alike ranks: one tab)
        assert [t.title for t in tabs.tabs] == ["Ranks 0, 2", "Rank 1", "Rank 3"], anchor
        assert [t.sync for t in tabs.tabs] == ["rank-0", "rank-1", "rank-3"], anchor
    directory = sections(page)["compile-directory"]
    per_rank = [len(t.rows) for t in of_type(directory, Table)]
    assert per_rank == [1, 15, 7]  # rank 1's [-/-] is named below its table
    assert sum(per_rank) == len(plan.frames) - 2  # and rank 2's [0/0] is rank 0's
    timeline = sections(page)["timeline"]
    assert [d.path for d in of_type(timeline, Download)] == [
        f"{plan.root}/_raw/chromium-events-all-ranks.json",  # every rank in one timeline
        *(f"{plan.root}/_raw/chromium-events-rank{n}.json" for n in (0, 1, 3)),
    ]  # rank 2 logged as rank 0 did: its events are in the timeline of all ranks
    said = "Rank 2, which logged as rank 0 did but for its times and timing events: in the "
    assert said + "timeline of all ranks" in texts(timeline)
    assert AnchorLink(plan.index_docname, "ranks", "Ranks") in of_type(page.blocks[1:4], AnchorLink)


def test_diverging_ranks_are_explained() -> None:
    _, page = build(INPUTS / "multi_rank_logs")
    ranks = sections(page)["ranks"]
    rows = table(ranks, "Rank")
    assert list(rows.header) == [
        "Rank",
        "Log",
        "Size",
        "Compile ids",
        "Statuses",
        "Compile time",
        "Chromium events",
    ]
    assert [inline_text(r[0]) for r in rows.rows] == ["0", "1", "2", "3"]
    (warning,) = of_type(ranks, Admonition)
    assert warning.kind == "warning"
    said = texts(warning)
    assert "Diverging compile ids: not every rank compiled the same functions." in said
    assert "[0/0]: error on ranks 0, 2; ok on ranks 1, 3" in said
    assert "Ranks 0, 2: no cache lookups" in said


def test_identical_ranks_do_not_diverge() -> None:
    _, page = build(INPUTS / "multi_rank_messy_input")
    ranks = sections(page)["ranks"]
    assert not of_type(ranks, Admonition)
    assert any(t.startswith("No divergence: every rank") for t in texts(ranks))
    assert "ranks" not in sections(build(SHARED / "simple")[1])


# -- torch.export -----------------------------------------------------------------------------


def test_export_report() -> None:
    _, page = build(EXPORT_LOG)
    export = sections(page)["export-report"]
    assert "2 issues found." in texts(export)
    issues = table(export, "Issue")
    assert list(issues.header) == ["Issue", "Expression or operator", "Detail", "Where"]
    assert [(r[0], r[1]) for r in issues.rows] == [
        (["Data-dependent error"], [Code("u0 > 3")]),
        (["Missing fake kernel"], [Code("capture.scale_rows.default")]),
    ]
    # the log gives no reason for the missing fake kernel: the page says what to do
    assert "torch.library.register_fake" in issues.rows[1][2][0]
    (program,) = of_type(export, CodeBlock)
    assert program.language == "python" and program.text.startswith("ExportedProgram:")
    assert any("if k > 3" in s for s in strings(page))
    assert "export-report" not in sections(build(SHARED / "compile_error")[1])


def test_no_source_leaves_out_the_users_code() -> None:
    _, page = build(EXPORT_LOG, no_source=True)
    said = "\n".join(strings(page))
    assert "k = n.item()" not in said and "if k > 3" not in said
    assert "/home/user/project/draft_export.py:35 in forward" in said
    _, shown = build(SHARED / "training")
    _, hidden = build(SHARED / "training", no_source=True)
    line = "return super().__call__(*args, **kwargs)"
    assert Code(line) in of_type(sections(shown)["where-compilations-start"], Code)
    assert line not in "\n".join(strings(hidden))


# -- options ----------------------------------------------------------------------------------


def test_sections_option_picks_sections() -> None:
    _, page = build(SHARED / "compile_error", sections=("failures", "trie"))
    assert anchors(page) == ["where-compilations-start", "failures-and-restarts", "frames"]
    assert Target("header") not in of_type(page, Target)  # no header
    assert of_type(page.blocks[-1], Toctree)  # the frames stay reachable
    _, unlisted = build(SHARED / "compile_error", sidebar_limit=0)
    assert not of_type(unlisted, Toctree)


def test_a_big_trace_lists_the_first_page_of_each_function_in_the_sidebar() -> None:
    plan, page = build(SHARED / "recompiles", sidebar_limit=5)
    (toctree,) = of_type(page.blocks[-1], Toctree)
    # 15 compile ids of 3 functions: [0/0], [1/0], [2/0], not the first 5 compiles
    assert list(toctree.docnames) == [
        f.docname for f in plan.listed_frames if f.compile.id.frame_compile_id == 0
    ]
    assert len(toctree.docnames) == 3 < len(plan.listed_frames)
    note = texts(page.blocks[-1])[0]
    assert note.startswith("The sidebar lists the first page of 3 functions of the 15 frame")
    _, limited = build(SHARED / "recompiles", sidebar_limit=2)
    (toctree,) = of_type(limited.blocks[-1], Toctree)
    assert len(toctree.docnames) == 2  # more functions than the limit: the first ones


# -- the stack trie ---------------------------------------------------------------------------


def record(envelope: dict[str, Any]) -> str:
    """One record without payload, as torch writes it."""
    return f"V1121 11:50:48.850000 5896 torch/_dynamo/convert_frame.py:1] {json.dumps(envelope)}\n"


def deep_log(tmp_path: Path, frames: int) -> Path:
    """A log whose one compilation starts under a Python stack ``frames`` deep."""
    stack = [{"line": i + 1, "name": f"level{i + 1}", "filename": 0} for i in range(frames)]
    ids = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}
    path = tmp_path / f"deep{frames}.log"
    path.write_text(
        record({"str": ["/home/user/deep.py", 0]})
        + record({"dynamo_start": {"stack": stack}, **ids}),
        encoding="utf-8",
    )
    return path


def trie_of(page: Page) -> BulletList:
    (trie,) = of_type(sections(page)["where-compilations-start"], BulletList)[:1]
    return trie


def test_deep_stack_is_listed_flat_below_four_levels(tmp_path: Path) -> None:
    plan, page = build(deep_log(tmp_path, 40))
    (fold,) = of_type(sections(page)["where-compilations-start"], Dropdown)  # 40 > 30 lines
    assert inline_text(fold.title) == "Stack trie (40 frames)"
    trie = trie_of(page)
    assert nesting(trie) == TRIE_MAX_NESTING
    lines = items(trie)
    assert len(lines) == 40  # no frame lost
    assert lines[0] == "/home/user/deep.py:1 in level1"
    assert lines[3] == "/home/user/deep.py:4 in level4"
    assert lines[4] == "(depth 5) /home/user/deep.py:5 in level5"
    assert lines[-1] == f"(depth 40) /home/user/deep.py:40 in level40 {plan.frames[0].name}"
    assert of_type(trie, ObjectLink) == [ObjectLink("frame", plan.frames[0].name)]


def test_shallow_trie_is_not_folded(tmp_path: Path) -> None:
    _, page = build(deep_log(tmp_path, 3))
    assert not of_type(sections(page)["where-compilations-start"], Dropdown)
    trie = trie_of(page)
    assert nesting(trie) == 3 and not any("(depth" in line for line in items(trie))


def test_a_stack_of_thousands_of_frames(tmp_path: Path) -> None:
    _, page = build(deep_log(tmp_path, 3000))
    trie = trie_of(page)
    assert nesting(trie) == TRIE_MAX_NESTING
    assert len(items(trie)) == 3000


# -- the view writes text, never markup -------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [SHARED / "compile_error", SHARED / "graph_breaks", INPUTS / "multi_rank_logs", EXPORT_LOG],
    ids=lambda p: p.name,
)
def test_no_markup_in_any_string(path: Path) -> None:
    _, page = build(path)
    for text in strings(page):
        for markup in ("``", ":torchtrace:", ":download:", ":doc:", "`__", ".. "):
            assert markup not in text, (markup, text[:200])


def test_blocks_are_blocks() -> None:
    """Every block the page holds is one of blocks.py's, so the Sphinx layer can render it."""
    _, page = build(INPUTS / "multi_rank_logs")
    allowed = get_args(Block)
    for block in page.blocks:
        assert isinstance(block, allowed)


def test_every_kind_of_export_issue_has_words() -> None:
    """The model tells the kinds apart, the page names each: a kind without words would
    show its key."""
    from sphinx_torchtrace.site.pages.overview.export import EXPORT_ISSUE_WORDS
    from sphinx_torchtrace.trace.analyses.export import EXPORT_ISSUE_KINDS

    assert set(EXPORT_ISSUE_KINDS) == set(EXPORT_ISSUE_WORDS)
