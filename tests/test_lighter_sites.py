"""Lighter sites (issue 10, points 9 and 10): no page for a graph a pass left unchanged, a
recompile's near-identical graph shown as a diff, ranks that repeat sharing their pages.

Real builds of real logs: ``shared/cache/run1`` (Inductor passes that change nothing, and a
recompile whose 300-line guards differ in a few lines), and the two-rank gloo trace copied
into eight ranks (``benchmarks/bench_ranks.py``: rank numbers rewritten, md5s recomputed).
"""

from __future__ import annotations

import dataclasses
import html
import re
import sys
from pathlib import Path

import pytest

from sphinx_torchtrace.site.blocks import (
    CodeBlock,
    Download,
    Dropdown,
    ObjectTarget,
    Paragraph,
    Section,
    Table,
    inline_text,
    web_inlines,
)
from sphinx_torchtrace.site.pages import build_page
from sphinx_torchtrace.site.pages.diffs import near_diff
from sphinx_torchtrace.site.plan import PageSettings, plan_trace
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.compare import sizes_only_changes

from .conftest import (
    SHARED,
    SiteMaker,
    copy_testroot,
    generated_pages,
    inventory,
    warnings_of,
    write_page,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from bench_ranks import GLOO, rank_copies  # noqa: E402

from .tools.hostile_log import format_record, read_records  # noqa: E402

#: Every graph and kernel on a page of its own (``torchtrace_fold_bytes = 0``): the rules that
#: keep a paged site light (big graphs get pages by default too).
PAGED = {"torchtrace_fold_bytes": 0}

CACHE_PAGE = """Cache
=====

.. torchtrace:: @DATA@/shared/cache/run1
   :name: cache
"""

RANKS_PAGE = """Ranks
=====

.. torchtrace:: logs
   :name: dist
"""


def page_file(uri: str) -> str:
    return uri.split("#", 1)[0]


@pytest.fixture
def cache_site(make_site: SiteMaker) -> object:
    return make_site("simple", "html", pages={"index.rst": CACHE_PAGE}, confoverrides=PAGED)


def test_a_graph_a_pass_left_unchanged_has_no_page(cache_site: object) -> None:
    app = cache_site
    assert "WARNING" not in warnings_of(app)  # type: ignore[arg-type]
    graphs = inventory(app)["graph"]  # type: ignore[arg-type]
    # the object stays, pointing at the page of the graph before the pass
    before, after = (
        graphs["cache/[0/0]/before_pre_grad_graph"],
        graphs["cache/[0/0]/after_pre_grad_graph"],
    )
    assert page_file(after) == page_file(before)
    pages = generated_pages(app, "")  # type: ignore[arg-type]
    assert not [p for p in pages if p.endswith("after-pre-grad-graph")]
    assert [p for p in pages if p.endswith("before-pre-grad-graph")]
    frame = next(u for n, u in inventory(app)["frame"].items() if n == "cache/[0/0]")  # type: ignore[arg-type]
    text = (app.outdir / page_file(frame)).read_text(encoding="utf-8")  # type: ignore[attr-defined]
    assert "unchanged by Inductor&#8217;s pre-grad passes" in text or (
        "unchanged by Inductor's pre-grad passes" in html.unescape(text)
    )
    # the identical graph's page declares both objects: the anchor is on it
    target = (app.outdir / page_file(before)).read_text(encoding="utf-8")  # type: ignore[attr-defined]
    assert after.split("#", 1)[1] in target


def test_a_recompiles_guards_are_a_diff_with_a_download(cache_site: object) -> None:
    app = cache_site
    graphs = inventory(app)["graph"]  # type: ignore[arg-type]
    uri = graphs["cache/[0/1]/dynamo_cpp_guards_str"]
    text = html.unescape(
        (app.outdir / page_file(uri)).read_text(encoding="utf-8")  # type: ignore[attr-defined]
    )
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", text))
    assert "Changes since the previous compile" in words
    assert "highlight-diff" in text
    assert "the whole text is a download" in words and "_downloads/" in text
    assert re.search(r"Size: [0-9.]+ KiB, \d+ lines", words)  # the facts stay
    previous = page_file(graphs["cache/[0/0]/dynamo_cpp_guards_str"]).rsplit("/", 1)[-1]
    assert previous in text  # a link to the previous compile's guards
    assert 'id="content"' not in text  # not the whole text again


def test_near_diff_is_bounded_and_exact() -> None:
    old = [f"line {i}" for i in range(500)]
    new = list(old)
    new[250] = "changed"
    diff = near_diff(old, new, "a", "b")
    assert diff is not None and "-line 250" in diff and "+changed" in diff
    assert "@@ -248,7 +248,7 @@" in diff
    assert near_diff(old, old, "a", "b") == ""
    assert near_diff(old, [f"other {i}" for i in range(500)], "a", "b") is None
    # many equal lines in a changed middle: too costly to compare, whole text shown
    hostile = ["x", "y"] * 5000
    assert near_diff(["a", *hostile], ["b", *hostile[::-1], "c"], "a", "b") is None


def rank_site(make_site: SiteMaker, tmp_path: Path, ranks: int) -> object:
    """The logs are in place before Sphinx starts: pages are planned when it does."""
    srcdir = copy_testroot("simple", tmp_path / f"ranks-{ranks}")
    write_page(srcdir, "index.rst", RANKS_PAGE)
    rank_copies(srcdir / "logs", ranks, GLOO)
    return make_site("simple", "html", srcdir=srcdir)


def test_ranks_that_repeat_share_pages(make_site: SiteMaker, tmp_path: Path) -> None:
    two = rank_site(make_site, tmp_path, 2)
    two_pages = len(generated_pages(two))  # type: ignore[arg-type]
    two_frames = inventory(two)["frame"]  # type: ignore[arg-type]
    assert len(two_frames) > 4
    eight = rank_site(make_site, tmp_path, 8)
    assert "WARNING" not in warnings_of(eight)  # type: ignore[arg-type]
    assert len(generated_pages(eight)) == two_pages  # type: ignore[arg-type]
    objects = inventory(eight)  # type: ignore[arg-type]
    frames = objects["frame"]
    for name in two_frames:
        for r in range(2, 8):
            alike = name.replace(f"/rank{int(name.split('/rank')[1][0])}/", f"/rank{r}/")
            if f"/rank{r % 2}/" in name:
                assert page_file(frames[alike]) == page_file(frames[name])
    assert len(frames) == 4 * len(two_frames)
    for kind in ("graph", "kernel"):
        assert len(objects[kind]) == 4 * len(inventory(two)[kind])  # type: ignore[arg-type]
    overview = html.unescape(
        (eight.outdir / "torchtrace/dist/index.html").read_text(encoding="utf-8")  # type: ignore[attr-defined]
    )
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", overview))
    # the classes first: one line each, however many ranks
    assert "8 ranks in 2 classes" in words
    assert "ranks 0, 2, 4, 6 (4 ranks, alike): the first rank" in words
    assert "ranks 1, 3, 5, 7 (4 ranks, alike): differs in" in words
    # the per-rank sections: one tab per class, not one per rank
    assert overview.count("Ranks 0, 2, 4, 6<") >= 3 and "Rank 2<" not in overview
    # rank 1 logged its first compile as rank 0 did: one page, which says so
    shared = (eight.outdir / page_file(frames["dist/rank1/[0/0]"])).read_text(encoding="utf-8")  # type: ignore[attr-defined]
    assert "Also ranks 1-7:" in re.sub(r"<[^>]+>", "", shared)


def test_ranks_that_differ_in_times_cost_a_line_and_a_table_in_all(tmp_path: Path) -> None:
    """Ranks with their own times: the ranks that differ in the same metrics are one line,
    and each differing value is one row with its spread over the ranks (lowest, highest,
    how many), as many rows for 16 ranks as for 8; each class's first rank alone has a
    timeline of its own, the others are in the timeline of all ranks."""
    shapes = []
    for n in (8, 16):
        trace = load_trace(rank_copies(tmp_path / f"logs{n}", n, GLOO, "alike"))
        plan = plan_trace("dist", trace, "torchtrace")
        page = build_page(plan, plan.index_docname, PageSettings())
        (ranks,) = [b for b in page.blocks if isinstance(b, Section) and b.anchor == "ranks"]
        said = [inline_text(b.content) for b in walk(ranks) if isinstance(b, Paragraph)]
        lines = [t.split(" in ")[0] for t in said if ": same as rank" in t]
        (values,) = [
            b
            for b in walk(ranks)
            if isinstance(b, Dropdown) and inline_text(b.title).startswith("Values that differ")
        ]
        (table,) = [b for b in walk(values) if isinstance(b, Table)]
        spreads = [inline_text(r[4]) for r in table.rows]
        assert all(
            re.fullmatch(r"\S+ \(rank \d+\)( to \S+ \(rank \d+\), \d+ ranks)?", s) for s in spreads
        ), spreads[:3]
        assert f"(rank {n - 1}), {n // 2 - 1} ranks" in " ".join(spreads)  # 3, 5, .. n-1
        shapes.append((len(lines), len(table.rows)))
        downloads = [d.path.rsplit("/", 1)[1] for d in walk(page) if isinstance(d, Download)]
        assert {
            "chromium-events-rank0.json",
            "chromium-events-rank1.json",
            "chromium-events-all-ranks.json",
        } <= set(downloads)
        assert "chromium-events-rank2.json" not in downloads
    assert lines == [
        "ranks 2, 4, 6, 8, 10, 12, 14: same as rank 0; differ",
        "ranks 3, 5, 7, 9, 11, 13, 15: same as rank 1; differ",
    ]
    assert shapes[0] == shapes[1]


def walk(value: object) -> list[object]:
    """Every block reachable from ``value``."""
    out = [value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            out.extend(walk(getattr(value, f.name)))
    elif isinstance(value, (list, tuple)):
        for v in value:
            out.extend(walk(v))
    return out


RECOMPILES = SHARED / "recompiles" / "dedicated_log_torch_trace_afr5b1tf.log"


def test_sizes_only_changes_leave_out_digits_only() -> None:
    old = ['x: "f32[4][1]cpu" = l_x_ * 2', "getitem_3 = split[0]"]
    assert sizes_only_changes(old, ['x: "f32[8][1]cpu" = l_x_ * 2', "getitem_3 = split[0]"]) == 1
    assert sizes_only_changes(old, old) == 0
    assert sizes_only_changes(old, [old[0], "getitem_4 = split[0]"]) == 1  # a number too
    assert sizes_only_changes(old, [old[0], "getitem_x = split[0]"]) is None  # a name
    assert sizes_only_changes(old, [old[0], "getitem_3 = split[0].relu()"]) is None  # an op
    assert sizes_only_changes(old, old[:1]) is None


def test_a_recompile_for_new_shapes_shows_its_first_changes(tmp_path: Path) -> None:
    """A recompile whose graph differs from the previous one only in sizes (the recompiles
    log's [0/1], its graphs made long by repeating them) gets no graph page: its frame page
    declares the graph's object and shows the first changes, folded, with the whole text a
    download, not hundreds of lines that repeat the new sizes."""
    records = read_records(RECOMPILES)
    for record in records:
        if record.kind in ("dynamo_output_graph", "dynamo_cpp_guards_str") and (
            record.frame in {(0, 0), (0, 1), (0, 2)}
        ):
            record.payload = "\n".join([record.payload or ""] * 8)
    log = tmp_path / "shapes.log"
    log.write_text("".join(format_record(r) for r in records), encoding="utf-8")
    plan = plan_trace("shapes", load_trace(log), "torchtrace", fold_bytes=0)
    first, second, third = (
        next(f for f in plan.frames if f.compile.label == label)
        for label in ("[0/0]", "[0/1]", "[0/2]")
    )
    base = next(g for g in first.graphs if g.artifact.name == "dynamo_output_graph")
    assert base.has_page and base.docname in plan.docnames
    for frame in (second, third):  # [0/2] is compared with the page its chain started from
        graph = next(g for g in frame.graphs if g.artifact.name == "dynamo_output_graph")
        assert not graph.has_page and graph.docname == frame.docname
        assert graph.numbers_of is base and graph.numbers_of_label == "[0/0]"
        assert not any(
            d.endswith("graph-dynamo-output-graph")
            for d in plan.docnames
            if d.startswith(frame.docname)
        )
    graph = next(g for g in second.graphs if g.artifact.name == "dynamo_output_graph")
    page = build_page(plan, second.docname, PageSettings())
    (artifacts,) = [b for b in page.blocks if isinstance(b, Section) and b.anchor == "artifacts"]
    at = next(i for i, b in enumerate(artifacts.blocks) if isinstance(b, ObjectTarget))
    target, folded = artifacts.blocks[at : at + 2]
    assert target == ObjectTarget("graph", "shapes/[0/1]/dynamo_output_graph")
    assert isinstance(folded, Dropdown) and inline_text(folded.title) == (
        "dynamo_output_graph: as [0/0]'s but for its numbers (32 of 88 lines differ)"
    )
    intro, diff, rest = folded.blocks
    assert isinstance(intro, Paragraph) and isinstance(diff, CodeBlock)
    assert "but for its numbers (sizes, strides, constants): 32 of 88 lines differ" in (
        inline_text(intro.content)
    )
    shown = diff.text.split("\n")
    assert shown[:2] == ["--- [0/0] dynamo_output_graph", "+++ [0/1] dynamo_output_graph"]
    assert '-    def forward(self, L_x_: "f32[4][1]cpu"):' in shown
    assert '+    def forward(self, L_x_: "f32[8][1]cpu"):' in shown
    assert len(shown) <= 50
    assert isinstance(rest, Paragraph) and "more changed lines are not shown" in inline_text(
        rest.content
    )
    assert any(
        isinstance(i, Download) and i.path == graph.raw_path for i in web_inlines(rest.content)
    )
    # the guards too: [0/1]'s differ from [0/0]'s in the size they check
    guards = next(g for g in second.graphs if g.artifact.name == "dynamo_cpp_guards_str")
    assert guards.numbers_of is not None and not guards.has_page
    assert ObjectTarget("graph", "shapes/[0/1]/dynamo_cpp_guards_str") in artifacts.blocks
    folded_guards = next(
        b
        for b in artifacts.blocks
        if isinstance(b, Dropdown)
        and inline_text(b.title).startswith("dynamo_cpp_guards_str: as [0/0]'s")
    )
    guards_intro = folded_guards.blocks[0]
    assert isinstance(guards_intro, Paragraph)
    assert inline_text(guards_intro.content).startswith("The same guards as [0/0]'s")
    (why,) = [b for b in page.blocks if isinstance(b, Section) and b.anchor == "changed"]
    assert any(
        isinstance(b, Paragraph)
        and "How the Dynamo graph changed: the same graph as" in inline_text(b.content)
        for b in why.blocks
    )


def test_a_graph_without_a_page_keeps_its_object(make_site: SiteMaker, tmp_path: Path) -> None:
    """In a real build, the numbers-only graph's object points into its frame page, and a
    role naming it links there."""
    records = read_records(RECOMPILES)
    for record in records:
        if record.kind == "dynamo_output_graph" and record.frame in {(0, 0), (0, 1)}:
            record.payload = "\n".join([record.payload or ""] * 8)
    (tmp_path / "shapes.log").write_text("".join(format_record(r) for r in records), "utf-8")
    app = make_site(
        "simple",
        pages={
            "index.rst": "Shapes\n======\n\n.. toctree::\n\n   shapes\n",
            "shapes.rst": "Shapes\n======\n\n"
            "See :torchtrace:graph:`shapes/[0/1]/dynamo_output_graph`."
            "\n\n.. torchtrace:: ../shapes.log\n   :name: shapes\n",
        },
    )
    assert "WARNING" not in warnings_of(app), warnings_of(app)
    graphs = inventory(app)["graph"]
    assert graphs["shapes/[0/1]/dynamo_output_graph"].split("#")[0] == (
        "torchtrace/shapes/frame-0-1.html"
    )
    assert not (
        Path(app.outdir) / "torchtrace/shapes/frame-0-1/graph-dynamo-output-graph.html"
    ).exists()
    page = (Path(app.outdir) / "shapes.html").read_text("utf-8")
    assert 'href="torchtrace/shapes/frame-0-1.html#' in page


def test_a_recompile_with_the_very_same_graph_says_so(tmp_path: Path) -> None:
    """A recompile whose Dynamo graph is the previous compile's, text for text (what
    changed is in the guards): no page, one line on the frame page and a download."""
    records = read_records(RECOMPILES)
    first = next(r for r in records if r.kind == "dynamo_output_graph" and r.frame == (0, 0))
    graph = "\n".join([first.payload or ""] * 8)
    for record in records:
        if record.kind == "dynamo_output_graph" and record.frame in {(0, 0), (0, 1)}:
            record.payload = graph
    log = tmp_path / "same.log"
    log.write_text("".join(format_record(r) for r in records), encoding="utf-8")
    plan = plan_trace("same", load_trace(log), "torchtrace", fold_bytes=0)
    frame = next(f for f in plan.frames if f.compile.label == "[0/1]")
    g = next(g for g in frame.graphs if g.artifact.name == "dynamo_output_graph")
    assert g.numbers_same and not g.has_page and g.numbers_of_label == "[0/0]"
    page = build_page(plan, frame.docname, PageSettings())
    (artifacts,) = [b for b in page.blocks if isinstance(b, Section) and b.anchor == "artifacts"]
    folded = next(
        b
        for b in artifacts.blocks
        if isinstance(b, Dropdown) and inline_text(b.title).startswith("dynamo_output_graph")
    )
    assert inline_text(folded.title) == "dynamo_output_graph: as [0/0]'s (the same text)"
    (text,) = folded.blocks
    assert isinstance(text, Paragraph)
    assert any(isinstance(i, Download) and i.path == g.raw_path for i in web_inlines(text.content))
