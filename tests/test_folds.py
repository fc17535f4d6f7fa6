"""Small graphs, their kernels and repeated small artifacts folded on the frame page.

Every generated page carries the theme (about 18 KB of sidebar, header and icons with furo),
more than most graphs weigh: a graph of at most ``torchtrace_fold_bytes`` is folded on its
frame page, with its kernels, and a small artifact that an earlier compile logged with the
same text links that compile's fold instead of being shown again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import cache

from sphinx_torchtrace.site.blocks import (
    AnchorLink,
    Block,
    CodeBlock,
    Download,
    Dropdown,
    ObjectLink,
    ObjectTarget,
    Page,
    PageLink,
    Section,
    Table,
    inline_text,
    web_inlines,
)
from sphinx_torchtrace.site.pages.frame import frame_page
from sphinx_torchtrace.site.plan import (
    DEFAULT_FOLD_BYTES,
    FRAME_FOLDS,
    PageSettings,
    TracePlan,
    plan_trace,
)
from sphinx_torchtrace.trace import load_trace

from .conftest import SHARED, SiteMaker


@cache
def plan_of(scenario: str, fold_bytes: int = DEFAULT_FOLD_BYTES) -> TracePlan:
    (log,) = (SHARED / scenario).glob("*.log")
    return plan_trace(scenario, load_trace(log), "torchtrace", fold_bytes=fold_bytes)


def walk(blocks: Sequence[Block]) -> Iterator[Block]:
    for block in blocks:
        yield block
        inner = getattr(block, "blocks", None)
        if inner is not None:
            yield from walk(inner)


def page(plan: TracePlan, label: str) -> Page:
    frame = next(f for f in plan.frames if f.compile.label == label)
    return frame_page(plan, frame, PageSettings())


def test_small_graphs_and_their_kernels_are_folded_on_the_frame_page() -> None:
    plan = plan_of("training")
    frame = next(f for f in plan.frames if f.compile.label == "[0/0]")
    shown = [g for g in frame.graphs if g.shown]
    assert shown and all(g.inline and g.docname == frame.docname for g in shown)
    assert all(k.inline and k.docname == frame.docname for k in frame.kernels if k.shown)
    # no page of their own: the frame page and the overview are the trace's pages here
    assert not [d for d in plan.docnames if d.startswith(frame.docname + "/")]
    blocks = list(walk(page(plan, "[0/0]").blocks))
    folds = {b.anchor: b for b in blocks if isinstance(b, Dropdown) and b.anchor}
    declared = {b.name for b in blocks if isinstance(b, ObjectTarget)}
    for item in [*shown, *(k for k in frame.kernels if k.shown)]:
        assert item.anchor in folds, item.name
        assert item.name in declared  # its object lives in its fold
    # a graph's fold shows its text, numbered; the runnable script is a download only
    for g in shown:
        codes = [b for b in walk(folds[g.anchor].blocks) if isinstance(b, CodeBlock)]
        downloads = [
            x
            for b in walk(folds[g.anchor].blocks)
            for line in getattr(b, "lines", [])
            for x in web_inlines(line)
            if isinstance(x, Download)
        ]
        if g.artifact.name == "fx_graph_runnable":
            assert g.raw_path and [d.path for d in downloads] == [g.raw_path]
            assert codes == []
            assert "a script to download" in inline_text(folds[g.anchor].title)
        else:  # shown whole: no raw copy written beside it
            assert codes and codes[-1].linenos
            assert not g.raw_path and not downloads


def test_the_artifacts_table_links_each_fold_and_identical_graphs_link_theirs() -> None:
    plan = plan_of("training")
    frame = next(f for f in plan.frames if f.compile.label == "[0/0]")
    artifacts = next(
        b for b in page(plan, "[0/0]").blocks if isinstance(b, Section) and b.anchor == "artifacts"
    )
    table = next(b for b in walk(artifacts.blocks) if isinstance(b, Table))
    anchors = {x.anchor for row in table.rows for x in row[0] if isinstance(x, AnchorLink)}
    pages = {x.docname for row in table.rows for x in row[0] if isinstance(x, PageLink)}
    assert not pages  # nothing of this frame has a page of its own
    for g in frame.graphs:
        target = g if g.same_as is None else g.same_as
        if g.numbers_of is None:
            assert target.anchor in anchors, g.name


def test_graphs_past_the_fold_size_or_the_frame_budget_get_pages() -> None:
    plan = plan_of("training")
    for f in plan.paged_frames:
        folded = [g for g in f.graphs if g.inline and g.artifact.name != "fx_graph_runnable"]
        assert sum(g.artifact.size for g in folded) <= DEFAULT_FOLD_BYTES * FRAME_FOLDS
        for g in f.graphs:
            if g.has_page:
                assert (
                    g.artifact.size > DEFAULT_FOLD_BYTES
                    or sum(x.artifact.size for x in folded) + g.artifact.size
                    > DEFAULT_FOLD_BYTES * FRAME_FOLDS
                )
    tiny = plan_of("training", 200)  # a 200-byte fold: every graph but the smallest paged
    frame = next(f for f in tiny.frames if f.compile.label == "[0/0]")
    paged = [g for g in frame.graphs if g.has_page]
    assert paged and all(g.artifact.size > 200 for g in paged)
    assert {g.docname for g in paged} <= set(tiny.docnames)
    # and their kernels are on pages of their own, beside their code's page
    code = {id(g.artifact) for g in paged}
    assert all(k.has_page for k in frame.kernels if k.shown and id(k.artifact) in code)


def test_a_small_artifact_logged_again_with_the_same_text_links_the_first() -> None:
    plan = plan_of("recompiles")
    copies = [
        (f, a, plan.first_copy(a))
        for f in plan.paged_frames
        for a in f.compile.artifacts
        if plan.first_copy(a) is not None
    ]
    assert copies, "the recompiles trace logs the same small artifacts again"
    for frame, artifact, found in copies:
        assert found is not None
        first_frame, first = found
        assert first is not artifact and first.name == artifact.name
        assert first.text() == artifact.text()
        assert plan.paged_frames.index(first_frame) <= plan.paged_frames.index(frame)
        assert plan.first_copy(first) is None  # the first is shown
        rows = next(
            b
            for b in page(plan, frame.compile.label).blocks
            if isinstance(b, Section) and b.anchor == "artifacts"
        )
        table = next(b for b in walk(rows.blocks) if isinstance(b, Table))
        row = next(
            r
            for r in table.rows
            if inline_text(r[0]) == artifact.name
            and isinstance(r[0][0], AnchorLink)
            and r[0][0].anchor == f"artifact-{first.ordinal}"
        )
        assert row[0][0].docname == first_frame.docname
        assert any(isinstance(x, ObjectLink) and x.name == first_frame.name for x in row[-1])


def test_a_link_to_a_fold_lands_on_it_in_a_built_site(make_site: SiteMaker) -> None:
    """Objects of folded graphs and kernels resolve to their fold, which the page has, and
    the page loads the script that opens a fold at its anchor."""
    app = make_site("simple", "html")
    assert app.warning.getvalue() == ""  # type: ignore[attr-defined]
    frame = (app.outdir / "torchtrace/simple/frame-0-0.html").read_text(encoding="utf-8")  # type: ignore[attr-defined]
    assert "sphinx-torchtrace.js" in frame
    folds = re.findall(r'<details class="torchtrace-fold"[^>]*>\s*<summary[^>]*id="([^"]+)"', frame)
    assert "graph-dynamo-output-graph" in folds and "kernel-cpp-fused-relu-0" in folds
    assert "sd-octicon" not in frame  # folds are drawn without sphinx-design's icons
    ids = set(re.findall(r'id="([^"]+)"', frame))
    hrefs = re.findall(r'href="frame-0-0\.html#([^"]+)"|href="#([^"]+)"', frame)
    assert hrefs
    for a, b in hrefs:
        assert (a or b) in ids
