"""The frame page view on real logs: what a reader of one compile's page sees, as blocks."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path

import pytest

from sphinx_torchtrace.site.artifacts import RECORD_INLINE_LIMIT
from sphinx_torchtrace.site.blocks import (
    AnchorLink,
    Block,
    BulletList,
    CodeBlock,
    Download,
    Dropdown,
    Lines,
    ObjectLink,
    ObjectTarget,
    Page,
    PageLink,
    Paragraph,
    Provenance,
    Section,
    Table,
    TabSet,
    Toctree,
    inline_text,
    web_inlines,
)
from sphinx_torchtrace.site.pages.frame import (
    FOLDED_TABLE_ROWS,
    FOLDS_LISTED,
    folded_if_many,
    frame_page,
)
from sphinx_torchtrace.site.plan import FramePlan, PageSettings, TracePlan, plan_trace
from sphinx_torchtrace.trace import load_trace

from .conftest import SHARED, TESTS

SCENARIOS = ("recompiles", "graph_breaks", "compile_error", "training", "provenance")


@cache
def plan_of(scenario: str) -> TracePlan:
    (log,) = (SHARED / scenario).glob("*.log")
    return plan_trace(scenario, load_trace(log), "torchtrace", fold_bytes=0)


def frame_of(scenario: str, label: str) -> FramePlan:
    """The frame of a compile by its label (``[0/2]``, ``[1/0_1]``, ``[0/0] #2``)."""
    return next(f for f in plan_of(scenario).frames if f.compile.label == label)


def page_of(
    scenario: str,
    label: str,
    *,
    no_source: bool = False,
    sidebar_limit: int | None = None,
    detail_toctree: bool = False,
) -> Page:
    settings = PageSettings(
        no_source=no_source, sidebar_limit=sidebar_limit, detail_toctree=detail_toctree
    )
    return frame_page(plan_of(scenario), frame_of(scenario, label), settings)


def walk(blocks: Sequence[Block]) -> Iterator[Block]:
    """Every block, nested ones included, in page order."""
    for b in blocks:
        yield b
        if isinstance(b, (Section, Dropdown)):
            yield from walk(b.blocks)
        elif isinstance(b, TabSet):
            for tab in b.tabs:
                yield from walk(tab.blocks)
        elif isinstance(b, BulletList):
            for item in b.items:
                yield from walk(item)


def strings(value: object) -> Iterator[str]:
    """Every string anywhere in a page: what could reach a reader."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings(v)
    elif dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            yield from strings(getattr(value, f.name))


def section(page: Page, anchor: str) -> Section:
    return next(b for b in page.blocks if isinstance(b, Section) and b.anchor == anchor)


def unfolded(block: Block) -> Block:
    """A reference table, folded or not (a long one is folded whole on the frame page)."""
    if isinstance(block, Dropdown) and len(block.blocks) == 1:
        return block.blocks[0]
    return block


def anchors(page: Page) -> list[str | None]:
    return [b.anchor for b in page.blocks if isinstance(b, Section)]


def facts(page: Page) -> dict[str, str]:
    block = next(b for b in page.blocks if isinstance(b, Lines) and "torchtrace-facts" in b.classes)
    pairs = (inline_text(line).split(": ", 1) for line in block.lines)
    return {label: value for label, value in pairs}


def text_of(blocks: Sequence[Block]) -> str:
    """What a reader reads in these blocks, as one string."""
    parts: list[str] = []
    for b in walk(blocks):
        if isinstance(b, Paragraph):
            parts.append(inline_text(b.content))
        elif isinstance(b, Lines):
            parts += [inline_text(line) for line in b.lines]
        elif isinstance(b, CodeBlock):
            parts.append(b.text)
        elif isinstance(b, Dropdown):
            parts.append(inline_text(b.title))
        elif isinstance(b, Table):
            parts += [inline_text(cell) for row in b.rows for cell in row]
    return "\n".join(parts)


def test_page_declares_its_frame_then_says_how_it_went() -> None:
    page = page_of("recompiles", "[0/2]")
    frame = frame_of("recompiles", "[0/2]")
    assert page.docname == frame.docname
    assert inline_text(page.title) == "recompiles · [0/2] static_fn"
    assert page.blocks[0] == ObjectTarget("frame", "recompiles/[0/2]", "ok")
    status = page.blocks[2]
    assert isinstance(status, Paragraph)
    assert status.content[0] == ObjectLink("frame", "recompiles/[0/2]", "ok")
    # what the metrics record, not an outcome they do not show
    assert "the log records no failure, restart or empty graph for it" in inline_text(
        status.content
    )
    assert facts(page) == {
        "Function": "static_fn in /home/user/project/recompiles.py:9",
        "Trace": f"recompiles, from line {frame.compile.first_line} of the log",
        "Compiled before": "recompiles/[0/1] (what changed)",
        "Compiled again": "recompiles/[0/3]",
        "Compile time": "0.759 s (backend 0.723 s)",
        "Graph": "4 operators, 6 nodes, 1 input",
        "Guards": "8 guards, 0 shape guards: dynamo_cpp_guards_str",
        "Caches": "aotautograd miss, fx_graph miss",
        "Kernels": "1",
        "Chromium events": "104",
    }
    links = [x for b in walk(page.blocks) if isinstance(b, Lines) for line in b.lines for x in line]
    assert AnchorLink(frame.docname, "changed", "what changed") in links
    assert AnchorLink(frame.docname, "kernels", "1") in links
    assert PageLink("torchtrace/recompiles/index", "recompiles") in links


def test_recompiled_frame_shows_the_failed_guard_and_the_graph_diff() -> None:
    page = page_of("recompiles", "[0/2]")
    # the figures and what was made first; the long blocks (diff, stack) after them
    assert anchors(page) == ["changed", "metrics", "artifacts", "kernels", "stack", "cache-lookups"]
    changed = section(page, "changed")
    assert inline_text(changed.title) == "Why it compiled again"
    intro = changed.blocks[0]
    assert isinstance(intro, Paragraph)
    assert ObjectLink("frame", "recompiles/[0/1]") in intro.content
    guard = changed.blocks[1]
    assert isinstance(guard, CodeBlock)
    assert guard.text == "tensor 'x' size mismatch at index 0. expected 8, actual 16"
    (entries,) = [b for b in changed.blocks if isinstance(b, BulletList)]
    assert [text_of(item) for item in entries.items] == [
        # each entry is the compile it names, a link to its page
        "recompiles/[0/1]: tensor 'x' size mismatch at index 0. expected 8, actual 16",
        "recompiles/[0/0]: tensor 'x' size mismatch at index 0. expected 4, actual 16",
    ]
    (diff,) = [b for b in changed.blocks if isinstance(b, CodeBlock) and b.language == "diff"]
    lines = diff.text.split("\n")
    assert lines[:2] == ["--- [0/1] dynamo_output_graph", "+++ [0/2] dynamo_output_graph"]
    assert '-    def forward(self, L_x_: "f32[8][1]cpu"):' in lines
    assert '+    def forward(self, L_x_: "f32[16][1]cpu"):' in lines


def test_first_compile_has_no_why_section() -> None:
    page = page_of("recompiles", "[0/0]")
    assert "changed" not in anchors(page)
    assert "Compiled before" not in facts(page)
    assert facts(page)["Compiled again"] == "recompiles/[0/1]"


def test_a_failure_shows_its_parts_as_structure_and_the_whole_message_folded() -> None:
    page = page_of("graph_breaks", "[1/0]")
    failures = section(page, "failures")
    assert inline_text(failures.title) == "Graph break"
    head, part, hints, links, context, whole = failures.blocks[:6]
    assert isinstance(head, Paragraph)
    assert inline_text(head.content).startswith(
        "graph break at /home/user/project/graph_breaks.py:19 (line "
    )
    assert isinstance(part, Lines)  # the break's type with its registry id, its explanation
    lines = [inline_text(line) for line in part.lines]
    assert lines == [
        "Call to `torch._dynamo.graph_break()` (GB0025)",
        "User-inserted graph break. Message: None",
    ]
    assert isinstance(hints, BulletList)
    assert [inline_text(i[0].content) for i in hints.items] == [  # type: ignore[attr-defined]
        "Hint: Remove the `torch._dynamo.graph_break()` call."
    ]
    assert isinstance(links, Lines)  # the break among the distinct ones; where it started
    (gb,), (trie,) = ([i for i in line if not isinstance(i, str)] for line in links.lines)
    assert gb == ObjectLink("gb", "graph_breaks/GB0025", "Call to `torch._dynamo.graph_break()`")
    assert isinstance(trie, AnchorLink) and trie.anchor == "start-frame-1-0"
    assert isinstance(context, Dropdown)
    assert inline_text(context.title) == "Developer debug context"
    assert isinstance(whole, Dropdown)
    frame = frame_of("graph_breaks", "[1/0]")
    (logged,) = frame.compile.artifacts_named("dynamo_graph_break_reason")
    assert inline_text(whole.title) == (
        f"The whole message, with tracebacks (dynamo_graph_break_reason, line {logged.line} "
        "of the log)"
    )
    (message,) = whole.blocks
    assert isinstance(message, CodeBlock)
    assert message.text == frame.compile.failures[0].reason == logged.text().strip()
    # the artifact is that message: its row links the fold, and the page shows it once
    assert whole.anchor == f"artifact-{logged.ordinal}"
    table = section(page, "artifacts").blocks[1]
    assert isinstance(table, Table)
    row = next(r for r in table.rows if inline_text(r[0]) == "dynamo_graph_break_reason")
    assert row[0] == [AnchorLink(frame.docname, whole.anchor, "dynamo_graph_break_reason")]
    assert inline_text(row[-1]) == f"under {inline_text(failures.title)}" == "under Graph break"
    folds = [b for b in walk(page.blocks) if isinstance(b, Dropdown)]
    assert [f for f in folds if f.anchor == whole.anchor] == [whole]
    shown = [b for b in walk(page.blocks) if isinstance(b, CodeBlock) and b.text == message.text]
    assert shown == [message]


def test_a_graph_break_without_a_reason_folds_its_message_where_its_artifact_row_links(
    tmp_path: Path,
) -> None:
    """A break whose message names only its place parses into no parts: its artifact's row
    still links the failures section's fold of the whole message, which shows it once."""
    from .test_hostile_logs import SIMPLE_TEXT, record

    frame_id = {"frame_id": 9, "frame_compile_id": 0, "attempt": 0}
    said = "Graph break in user code at /x/m.py:3"
    start = {"dynamo_start": {"stack": [{"line": 3, "name": "f", "filename": "/x/m.py"}]}}
    reason = {"artifact": {"name": "dynamo_graph_break_reason", "encoding": "string"}}
    metrics = {"compilation_metrics": {"co_name": "f", "graph_op_count": 1}}
    log = tmp_path / "no_reason.log"
    log.write_text(
        SIMPLE_TEXT
        + record({**start, **frame_id})
        + record({**reason, **frame_id}, said)
        + record({**metrics, **frame_id}),
        encoding="utf-8",
    )
    plan = plan_trace("one", load_trace(log), "torchtrace")
    frame = next(f for f in plan.frames if f.compile.label == "[9/0]")
    page = frame_page(plan, frame, PageSettings())
    (logged,) = frame.compile.artifacts_named("dynamo_graph_break_reason")
    failures = section(page, "failures")
    (fold,) = [b for b in walk(failures.blocks) if isinstance(b, Dropdown)]
    assert fold.anchor == f"artifact-{logged.ordinal}"
    assert fold.blocks == [CodeBlock(said, "text")]
    table = unfolded(section(page, "artifacts").blocks[1])
    assert isinstance(table, Table)
    (row,) = [r for r in table.rows if inline_text(r[0]) == "dynamo_graph_break_reason"]
    assert row[0] == [AnchorLink(frame.docname, fold.anchor, logged.name)]
    assert inline_text(row[-1]) == f"under {inline_text(failures.title)}"
    shown = [b for b in walk(page.blocks) if isinstance(b, CodeBlock) and said in b.text]
    assert shown == [fold.blocks[0]]


def test_a_compile_error_links_its_traceback_from_the_artifacts_table() -> None:
    page = page_of("compile_error", "[7/0]")
    frame = frame_of("compile_error", "[7/0]")
    failures = section(page, "failures")
    head = failures.blocks[0]
    assert isinstance(head, Paragraph)
    # torch names no place; the traceback's innermost user line is the failing fw_compiler
    assert inline_text(head.content).startswith(
        "BackendCompilerFailed at /home/user/project/compile_error.py:80 (line "
    )
    headline = failures.blocks[1]
    assert isinstance(headline, Lines)
    assert [inline_text(line) for line in headline.lines] == [
        "backend='fail_in_compiler' raised: "
        "NotImplementedError: intentional failure in the forward compiler (after AOT)",
    ]
    (traceback,) = [b for b in failures.blocks if isinstance(b, Dropdown) and b.anchor]
    (error,) = frame.compile.artifacts_named("dynamo_error")
    assert traceback.anchor == f"artifact-{error.ordinal}"
    table = section(page, "artifacts").blocks[1]
    assert isinstance(table, Table)
    row = next(r for r in table.rows if inline_text(r[0]) == "dynamo_error")
    assert row[0] == [AnchorLink(frame.docname, f"artifact-{error.ordinal}", "dynamo_error")]
    assert inline_text(row[-1]) == f"under {inline_text(failures.title)}"  # the section's name


def test_training_frame_has_forward_and_backward_metrics_tabs() -> None:
    page = page_of("training", "[0/0]")
    compile_ = frame_of("training", "[0/0]").compile
    (tabs,) = section(page, "metrics").blocks
    assert isinstance(tabs, TabSet)
    assert [t.title for t in tabs.tabs] == ["Forward", "Backward"]
    frame = frame_of("training", "[0/0]")
    for tab, record in zip(tabs.tabs, compile_.metrics, strict=True):
        table, *rest = tab.blocks
        assert isinstance(table, Table) and table.header == ["Metric", "Value"]
        whole = rest[-1]
        assert isinstance(whole, Dropdown)
        (code,) = whole.blocks
        assert isinstance(code, CodeBlock) and code.language == "json"
        shown = json.loads(code.text)
        data = json.loads(json.dumps(record.data, default=str))
        if len(json.dumps(data)) <= RECORD_INLINE_LIMIT:  # a short record: whole, folded
            assert frame.record_download(record) is None and len(rest) == 1
            assert inline_text(whole.title) == (
                f"The whole {record.event} record (line {record.line} of the log)"
            )
            assert shown == data
            continue
        # a long one (Inductor's config, provenance): a download, and folded without the
        # long values, each cut to its start
        (offer,) = rest[:-1]
        assert isinstance(offer, Paragraph)
        assert inline_text(offer.content) == (
            f"The whole {record.event} record (line {record.line} of the log) is a download."
        )
        assert frame.record_download(record).endswith(".json")
        assert set(shown) == set(data)
        long_values = [k for k, v in data.items() if len(json.dumps(v)) > 1000]
        assert long_values and all(
            shown[k].endswith("characters in all: in the whole record)") for k in long_values
        )
        assert all(shown[k] == v for k, v in data.items() if k not in long_values)
    forward_table = tabs.tabs[0].blocks[0]
    assert isinstance(forward_table, Table)
    forward = {inline_text(r[0]): inline_text(r[1]) for r in forward_table.rows}
    assert forward["entire_frame_compile_time_s (Entire frame compile time)"] == "18.442 s"
    assert forward["graph_op_count (Graph operators)"] == "9"
    assert forward["has_guarded_code (Has guarded code)"] == "yes"


def test_artifacts_table_lists_the_pipeline_and_links_graph_pages() -> None:
    page = page_of("training", "[0/0]")
    frame = frame_of("training", "[0/0]")
    artifacts = section(page, "artifacts")
    table = unfolded(artifacts.blocks[1])
    assert isinstance(table, Table)
    assert table.header == ["Artifact", "Size", "Nodes", "Kernels", "Content"]
    names = [inline_text(r[0]) for r in table.rows]
    assert names[:4] == [
        "dynamo_output_graph",
        "aot_joint_graph",
        "aot_forward_graph",
        "aot_backward_graph",
    ]
    assert "inductor_output_code (forward)" in names and "inductor_output_code (backward)" in names
    linked = {x.docname for r in table.rows for x in r[0] if isinstance(x, PageLink)}
    assert linked == {g.docname for g in frame.graphs}
    downloads = {
        x.path: x.text for r in table.rows for x in web_inlines(r[-1]) if isinstance(x, Download)
    }
    assert downloads == {
        **{
            g.raw_path: "runnable .py" if g.artifact.name == "fx_graph_runnable" else "raw"
            for g in frame.graphs
        },
        # too large to show: a download, as tlparse links it
        **{d.raw_path: "raw" for d in frame.downloads},
    }
    assert {d.artifact.name for d in frame.downloads} == {"fx_graph_cache_miss"}
    code_rows = [r for r in table.rows if inline_text(r[0]).startswith("inductor_output_code")]
    assert sum(int(inline_text(r[3])) for r in code_rows) == len(frame.kernels)
    # artifacts without a page are shown below the table, each under its anchor
    below = [r for r in table.rows if inline_text(r[-1]) == "below"]
    folded = {b.anchor: b for b in artifacts.blocks if isinstance(b, Dropdown) and b.anchor}
    assert below and len(folded) == len(below)
    for row in below:
        (link,) = row[0]
        assert isinstance(link, AnchorLink) and link.docname == frame.docname
        assert inline_text(folded[link.anchor].title).startswith(link.text + " (")


def test_long_reference_tables_are_folded_whole_with_their_count() -> None:
    # the answer and every section's heading stay near the top of a big frame's page;
    # the table is all there, one click away, and a short one is not folded
    page = page_of("training", "[0/0]")
    for anchor, what in (("artifacts", "artifacts"), ("kernels", "kernels")):
        fold = next(b for b in section(page, anchor).blocks if unfolded(b) is not b)
        assert isinstance(fold, Dropdown) and not fold.open
        (table,) = fold.blocks
        assert isinstance(table, Table) and len(table.rows) > FOLDED_TABLE_ROWS
        assert inline_text(fold.title) == f"The table of {len(table.rows)} {what}"
    short = section(page, "cache-lookups")
    assert any(isinstance(b, Table) for b in short.blocks)
    assert not any(isinstance(b, Dropdown) for b in short.blocks)


def test_many_folds_are_one_fold_and_a_few_stay_listed() -> None:
    folds = [Dropdown([f"artifact {i}"], [Paragraph(["text"])], anchor=f"a{i}") for i in range(40)]
    assert folded_if_many(folds[:FOLDS_LISTED], "artifacts") == folds[:FOLDS_LISTED]
    (outer,) = folded_if_many(folds, "artifacts shown on this page")
    assert isinstance(outer, Dropdown) and not outer.open and outer.blocks == folds
    assert inline_text(outer.title) == "The 40 artifacts shown on this page"


def test_kernels_table_links_each_kernel_and_its_code() -> None:
    page = page_of("training", "[0/0]")
    frame = frame_of("training", "[0/0]")
    table = unfolded(section(page, "kernels").blocks[-1])
    assert isinstance(table, Table)
    assert table.header == ["Kernel", "Kind", "In", "Source nodes"]
    assert len(frame.kernels) == 13
    # one row per kernel, an extern kernel (a library call) too, with the lines calling it
    assert len(table.rows) == len(frame.kernels)
    for row, kernel in zip(table.rows, frame.kernels, strict=True):
        assert row[0] == [PageLink(kernel.docname, kernel.kernel.name)]
        assert kernel.code is not None
        # the forward's or the backward's output code, named short: rows stay one line
        phase = (
            "forward"
            if kernel.artifact is frame.compile.artifacts_named("inductor_output_code")[0]
            else "backward"
        )
        code = PageLink(kernel.code.docname, f"{phase} code")
        lines = kernel.kernel.launch_lines
        if kernel.kernel.kind != "extern":
            assert row[2] == [code]
        else:
            word = "lines" if len(lines) > 1 else "line"
            assert row[2] == [code, f" {word} " + ", ".join(map(str, lines))]
    assert any(inline_text(row[3]) for row in table.rows)  # source nodes of fused kernels


def test_dynamic_shapes_and_cache_lookups() -> None:
    page = page_of("training", "[0/0]")
    shapes = section(page, "dynamic-shapes")
    table = shapes.blocks[1]
    assert isinstance(table, Table) and len(table.rows) == 1
    caches = section(page, "cache-lookups").blocks[0]
    assert isinstance(caches, Table)
    assert [inline_text(r[0]) + " " + inline_text(r[1]) for r in caches.rows] == [
        "aotautograd miss",
        "fx_graph miss",
        "fx_graph miss",
    ]


def test_provenance_section_where_node_mappings_were_logged() -> None:
    page = page_of("provenance", "[0/0]")
    (view,) = [b for b in walk(page.blocks) if isinstance(b, Provenance)]
    assert view.frame == "provenance/[0/0]"
    assert section(page, "provenance").blocks[-1] is view
    assert "provenance" not in anchors(page_of("recompiles", "[0/2]"))


def test_settings_orphan_and_detail_toctree() -> None:
    frame = frame_of("training", "[0/0]")
    listed = page_of("training", "[0/0]")
    assert not listed.orphan
    assert not any(isinstance(b, Toctree) for b in listed.blocks)
    detail = page_of("training", "[0/0]", sidebar_limit=0, detail_toctree=True)
    assert detail.orphan
    toctree = detail.blocks[-1]
    assert isinstance(toctree, Toctree) and toctree.hidden
    assert list(toctree.docnames) == [g.docname for g in frame.graphs if g.same_as is None] + [
        k.docname for k in frame.kernels
    ]


def capture_line(script: str, fragment: str) -> str:
    """A line of the script that produced a log: what ``:no-source:`` must keep out."""
    lines = (TESTS / "capture" / script).read_text(encoding="utf-8").splitlines()
    return next(line.strip() for line in lines if fragment in line)


@pytest.mark.parametrize(
    ("scenario", "label", "script", "fragment"),
    [
        ("graph_breaks", "[1/0]", "graph_breaks.py", 'print("f:"'),  # stack loc, traceback
        ("recompiles", "[0/2]", "recompiles.py", "(x * 2 + x.sum()).relu()"),  # graph diff
        ("recompiles", "[2/3]", "recompiles.py", "return x + n"),  # failed guard comment
        ("training", "[0/0]", "training.py", "loss = loss_fn(cmodel(x)"),  # user stack code
    ],
)
def test_no_source_leaves_user_code_out(
    scenario: str, label: str, script: str, fragment: str
) -> None:
    code = capture_line(script, fragment).split("  #")[0]
    assert any(code in s for s in strings(page_of(scenario, label)))
    assert not any(code in s for s in strings(page_of(scenario, label, no_source=True)))


def test_no_source_keeps_where_the_code_is() -> None:
    page = page_of("training", "[0/0]", no_source=True)
    stack = section(page, "stack")
    (table,) = [b for b in stack.blocks if isinstance(b, Table)]
    assert table.header == ["File", "Line", "Function"]
    assert [inline_text(r[0]) for r in table.rows][0] == "/home/user/project/training.py"
    record = next(b for b in walk(page.blocks) if isinstance(b, CodeBlock) and b.language == "json")
    assert "stack_trace" not in json.loads(record.text)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_view_writes_no_markup(scenario: str) -> None:
    """Log text goes in as text: no role, no inline literal, no escaping added by the view."""
    plan = plan_of(scenario)
    for frame in plan.frames:
        page = frame_page(plan, frame, PageSettings())
        title = inline_text(page.title)
        assert title.startswith(f"{plan.label} · {frame.compile.label}"), title
        for s in strings(page):
            for markup in ("``", ":torchtrace:", ":doc:", ":ref:", ":code:", "\\_", "\\["):
                assert markup not in s, (frame.name, s[:200])


def test_every_frame_page_of_every_log_builds() -> None:
    for scenario in (*SCENARIOS, "simple"):
        plan = plan_of(scenario)
        for frame in plan.frames:
            for no_source in (False, True):
                page = frame_page(plan, frame, PageSettings(no_source=no_source))
                assert page.blocks[0] == ObjectTarget("frame", *plan.frame_objects(frame)[0])
                assert all(a is None or a.replace("-", "").isalnum() for a in anchors(page))
                assert len(set(anchors(page))) == len(anchors(page))


def test_every_node_mapping_that_links_anything_gets_a_provenance_block() -> None:
    from sphinx_torchtrace.site.blocks import Provenance
    from sphinx_torchtrace.trace.analyses.provenance import provenance_views

    frame = frame_of("provenance", "[0/1]")
    views = provenance_views(frame.compile)
    assert [v.empty for v in views] == [False, True]  # the backward's mapping links nothing
    provenance = section(page_of("provenance", "[0/1]"), "provenance")
    assert [b.view for b in provenance.blocks if isinstance(b, Provenance)] == [0]
    # a compile whose two mappings both link: two blocks, forward then backward
    (log,) = (SHARED / "provenance").glob("*.log")
    # a copy of our own
    plan = plan_trace("provenance", load_trace(log), "torchtrace", fold_bytes=0)
    mine = next(f for f in plan.frames if f.compile.label == "[0/1]")
    forward = mine.compile.artifacts_named("inductor_provenance_tracking_node_mappings")[0]
    mine.compile.artifacts.append(forward)  # standing for a backward mapping that links
    page = frame_page(plan, mine, PageSettings())
    (twice,) = [b for b in page.blocks if isinstance(b, Section) and b.anchor == "provenance"]
    assert [b.view for b in twice.blocks if isinstance(b, Provenance)] == [0, 2]
    assert "Forward" in [inline_text(b.content) for b in twice.blocks if isinstance(b, Paragraph)]


MAPPING_LOGS = sorted(
    log
    for log in TESTS.glob("data/**/*torch_trace*.log")
    if b"inductor_provenance_tracking_node_mappings" in log.read_bytes()
)


@pytest.mark.parametrize("log", MAPPING_LOGS, ids=lambda p: str(p.relative_to(TESTS / "data")))
def test_a_provenance_view_made_of_the_same_texts_is_shown_once(log: Path) -> None:
    """A recompile of the same graphs logs the same mapping, graphs and code again: its page
    links the first page's view, which is shown there; every other view is on its page."""
    from sphinx_torchtrace.site.blocks import Provenance
    from sphinx_torchtrace.trace.analyses.provenance import provenance_sources

    def texts(frame: FramePlan) -> list[list[str | None]]:
        sources = provenance_sources(frame.compile)
        return [[None if a is None else a.text() for a in view] for view in sources]

    plan = plan_trace("p", load_trace(log), "torchtrace")
    shown: dict[str, FramePlan] = {}
    for frame in plan.paged_frames:
        page = frame_page(plan, frame, PageSettings())
        found = [b for b in page.blocks if isinstance(b, Section) and b.anchor == "provenance"]
        if not found:
            continue
        (part,) = found
        copy = plan.provenance_copy(frame)
        views = [b for b in part.blocks if isinstance(b, Provenance)]
        if copy is None:
            assert views, frame.name
            key = repr(texts(frame))
            assert key not in shown, (frame.name, shown.get(key) and shown[key].name)
            shown[key] = frame
            continue
        assert not views and texts(copy) == texts(frame), frame.name
        assert shown[repr(texts(frame))] is copy  # shown whole, earlier, on its own page
        (said,) = part.blocks
        assert isinstance(said, Paragraph)
        assert ObjectLink("frame", copy.name) in said.content
        assert AnchorLink(copy.docname, "provenance", "its provenance view") in said.content
    if log.name.endswith("rank_0.log") and "multi_rank_runtime" in log.parts:  # one graph, thrice
        copies = {f.compile.label: plan.provenance_copy(f) for f in plan.paged_frames}
        first = next(f for f in plan.paged_frames if f.compile.label == "[0/1]")
        assert copies["[0/1]"] is None and copies["[0/2]"] is first is copies["[0/3]"]


def test_a_kernels_graph_nodes_come_from_its_comment_or_the_node_mapping() -> None:
    """C++ kernels of torch 2.13 carry no ``Source Nodes`` comment: their nodes come from the
    compile's node mapping where provenance tracking logged one, and where it did not, the
    page says why the column is empty and how to fill it."""
    mapped = frame_of("provenance", "[0/0]")
    rows = section(page_of("provenance", "[0/0]"), "kernels")
    table = next(b for b in rows.blocks if isinstance(b, Table))
    generated = [k for k in mapped.kernels if k.kernel.kind == "cpp"]
    assert generated and all(not k.kernel.source_nodes for k in generated)
    for row, k in zip(table.rows, mapped.kernels, strict=True):
        if k.kernel.kind == "cpp":
            assert inline_text(row[-1]), k.name  # from the mapping
    assert "were not logged" not in text_of(rows.blocks)
    unmapped = section(page_of("training", "[0/0]"), "kernels")
    count = sum(1 for k in frame_of("training", "[0/0]").kernels if k.kernel.kind != "extern")
    assert f"The graph nodes of {count} generated kernels were not logged" in text_of(
        unmapped.blocks
    )
    assert "provenance_tracking_level = 1" in text_of(unmapped.blocks)
