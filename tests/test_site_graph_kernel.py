"""The graph and kernel page views, on the bundled real logs.

What a reader relies on: a graph page shows the artifact's whole text and offers it
as a download, post-grad and pre-grad graphs say which kernels and nodes came of each
node (with lines that point at the right lines), a kernel page shows its source
numbered as in the code it came from and the wrapper lines that launch it,
``:no-source:`` leaves the user's code out, and no string the view writes is markup.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest

from sphinx_torchtrace.site.blocks import (
    AnchorLink,
    Code,
    CodeBlock,
    Download,
    Lines,
    ObjectLink,
    ObjectTarget,
    Page,
    PageLink,
    Section,
    Table,
    inline_text,
    web_inlines,
)
from sphinx_torchtrace.site.pages.graph import graph_page
from sphinx_torchtrace.site.pages.kernel import kernel_page
from sphinx_torchtrace.site.plan import (
    FramePlan,
    GraphPlan,
    KernelPlan,
    PageSettings,
    TracePlan,
    plan_trace,
)
from sphinx_torchtrace.trace import load_trace

DATA = Path(__file__).parent / "data"
SHARED = DATA / "shared"
INPUTS = SHARED / "tlparse-inputs" / "inputs"
SIMPLE = SHARED / "simple" / "dedicated_log_torch_trace_5aek85xk.log"
TRAINING = SHARED / "training" / "dedicated_log_torch_trace_ukjvghtw.log"
PROVENANCE = SHARED / "provenance" / "dedicated_log_torch_trace_0ptegd0d.log"
CACHE_RUN = SHARED / "cache" / "run1" / "dedicated_log_torch_trace_ecrobrij.log"
JIT_CUDA = INPUTS / "inductor_provenance_jit_cuda_log.txt"
AOT_CPU = INPUTS / "inductor_provenance_aot_log.txt"
TRITON_LOGS = [
    JIT_CUDA,
    INPUTS / "inductor_provenance_jit_debug_handle_log.txt",
    INPUTS / "inductor_provenance_aot_cuda_log.txt",
    INPUTS / "inductor_provenance_extended_log.txt",
    INPUTS / "collectives_parity" / "dedicated_log_torch_trace_rank_0.log",
]
ALL_LOGS = [SIMPLE, TRAINING, PROVENANCE, CACHE_RUN, AOT_CPU, *TRITON_LOGS]
NO_SOURCE = PageSettings(no_source=True)
DEFAULT = PageSettings()


@functools.cache
def plan_of(log: Path) -> TracePlan:
    return plan_trace("run", load_trace(log), "torchtrace", fold_bytes=0)


def graphs(log: Path) -> list[tuple[TracePlan, FramePlan, GraphPlan]]:
    """The graphs with a page of their own (not one identical to an earlier graph)."""
    plan = plan_of(log)
    return [(plan, f, g) for f in plan.frames for g in f.graphs if g.same_as is None]


def kernels(log: Path) -> list[tuple[TracePlan, FramePlan, KernelPlan]]:
    plan = plan_of(log)
    return [(plan, f, k) for f in plan.frames for k in f.kernels]


def graph_named(log: Path, name: str) -> tuple[TracePlan, FramePlan, GraphPlan]:
    """The graph of that name, or, when it is identical to an earlier graph of its frame
    (a pass that changed nothing), the graph whose page shows it."""
    plan = plan_of(log)
    plan, frame, graph = next(
        (plan, f, g) for f in plan.frames for g in f.graphs if g.name.endswith("/" + name)
    )
    return plan, frame, graph.same_as or graph


def walk(value: object, into_code: bool = True) -> Iterator[object]:
    """Every block, inline item and string under a page's blocks, depth first
    (without the text of code blocks unless ``into_code``)."""
    yield value
    if isinstance(value, CodeBlock) and not into_code:
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from walk(item, into_code)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            yield from walk(getattr(value, f.name), into_code)


def section(page: Page, anchor: str) -> Section | None:
    found = [b for b in page.blocks if isinstance(b, Section) and b.anchor == anchor]
    assert len(found) <= 1
    return found[0] if found else None


def facts(page: Page) -> dict[str, list[object]]:
    """The page's facts, by label: ``{"Frame": [ObjectLink(...), ...]}``."""
    block = next(
        b for b in page.blocks if isinstance(b, Lines) and "torchtrace-breadcrumbs" not in b.classes
    )
    assert list(block.classes) == ["torchtrace-facts"]
    out: dict[str, list[object]] = {}
    for shown in block.lines:
        line = web_inlines(shown)  # the Download line is the web page's alone
        label = line[0]
        assert isinstance(label, str) and label.endswith(": ")
        out[label[:-2]] = list(line[1:])
    return out


def only_code(blocks: object) -> CodeBlock:
    found = [b for b in walk(blocks) if isinstance(b, CodeBlock)]
    assert len(found) == 1
    return found[0]


# -- graph pages ------------------------------------------------------------------------------


@pytest.mark.parametrize("log", [SIMPLE, TRAINING, PROVENANCE], ids=lambda p: p.parent.name)
def test_graph_page_shows_the_whole_artifact_and_offers_it(log: Path) -> None:
    for plan, frame, graph in graphs(log):
        page = graph_page(plan, frame, graph, DEFAULT)
        assert page.blocks[0] == ObjectTarget("graph", graph.name)
        assert page.docname == graph.docname and page.orphan
        content = section(page, "content")
        if content is None:  # a recompile's near-identical graph: the changes instead
            content = section(page, "changes")
            assert content is not None and content is page.blocks[-1]
        else:
            assert content is page.blocks[-1]
            block = only_code(content.blocks)
            assert block.text == graph.artifact.text() and block.linenos
        downloads = [d for d in walk(facts(page)["Download"]) if isinstance(d, Download)]
        assert [d.path for d in downloads] == [graph.raw_path]
        assert facts(page)["Frame"][0] == ObjectLink("frame", frame.name)
        title = inline_text(page.title)
        # where am I: trace · compile id · what the page is
        assert title.startswith(f"{plan.label} · {frame.compile.label} · ")
        assert title.split(" · ")[-1].startswith(graph.name.rsplit("/", 1)[1])
        crumbs = page.blocks[1]
        assert isinstance(crumbs, Lines) and crumbs.classes == ["torchtrace-breadcrumbs"]
        assert PageLink(plan.index_docname, plan.label) in crumbs.lines[0]
        assert any(isinstance(x, PageLink) and x.docname == frame.docname for x in crumbs.lines[0])


def _download_text(page: Page) -> str:
    (download,) = [i for i in facts(page)["Download"] if isinstance(i, Download)]
    return download.text


def test_graph_page_languages_and_download_labels() -> None:
    pages = {g.artifact.name: graph_page(p, f, g, DEFAULT) for p, f, g in graphs(SIMPLE)}
    code_page, runnable = pages["inductor_output_code"], pages["fx_graph_runnable"]
    assert only_code(section(code_page, "content")).language == "python"
    assert only_code(section(pages["dynamo_output_graph"], "content")).language == "torchtrace-fx"
    assert _download_text(runnable) == "runnable script (.py)"
    assert _download_text(code_page) == "raw text"
    # the runnable script says how to run it
    assert any(isinstance(b, Code) and b.text == "python" for b in walk(runnable.blocks))


def test_detail_pages_are_in_toctrees_only_when_one_document_is_built() -> None:
    plan, frame, graph = graphs(SIMPLE)[0]
    _, kframe, kernel = kernels(SIMPLE)[0]
    together = PageSettings(detail_toctree=True)
    assert graph_page(plan, frame, graph, DEFAULT).orphan
    assert not graph_page(plan, frame, graph, together).orphan
    assert kernel_page(plan, kframe, kernel, DEFAULT).orphan
    assert not kernel_page(plan, kframe, kernel, together).orphan


def test_training_graphs_say_which_pass_they_are() -> None:
    phases = {}
    plan = plan_of(TRAINING)
    for frame in plan.frames:
        for graph in frame.graphs:
            if graph.artifact.name != "inductor_post_grad_graph":
                continue
            page = graph_page(plan, frame, graph.same_as or graph, DEFAULT)
            title = inline_text(page.title)
            phases[title] = inline_text(facts(page)["Frame"])  # type: ignore[arg-type]
    assert any(t.endswith(" (forward)") for t in phases), phases
    assert any(t.endswith(" (backward)") for t in phases), phases
    for title, frame_fact in phases.items():
        phase = next((p for p in ("forward", "backward") if f"({p})" in title), None)
        # a compile with one post-grad graph (inference) names no pass
        assert frame_fact.endswith(f", {phase} pass") if phase else "pass" not in frame_fact


def _node_lines_hold_their_nodes(table: Table, text: str) -> None:
    """``name (N)`` in a provenance table: line N of the graph shown defines ``name``."""
    lines = text.split("\n")
    for row in table.rows:
        (cell,) = row[0]
        assert isinstance(cell, Code)
        for name, number in re.findall(r"(\w+) \((\d+)\)", cell.text):
            assert lines[int(number) - 1].strip().startswith(name), (name, number)


def test_post_grad_graph_lists_the_kernels_of_each_node() -> None:
    plan, frame, graph = graph_named(PROVENANCE, "inductor_post_grad_graph")
    page = graph_page(plan, frame, graph, DEFAULT)
    kernels_section = section(page, "kernels-by-node")
    assert kernels_section is not None
    table = next(b for b in kernels_section.blocks if isinstance(b, Table))
    assert list(table.header) == ["Nodes", "Kernels"]
    _node_lines_hold_their_nodes(table, only_code(section(page, "content")).text)
    relu = next(r for r in table.rows if inline_text(r[0]) == "relu (6)")
    (link,) = relu[1]
    target = next(k for k in frame.kernels if k.docname == getattr(link, "docname", None))
    assert target.kernel.name == "cpp_fused_relu_0" and inline_text([link]).startswith(
        "cpp_fused_relu_0"
    )
    assert section(page, "what-each-node-became") is None


def test_pre_grad_graph_says_what_each_node_became() -> None:
    plan, frame, graph = graph_named(PROVENANCE, "before_pre_grad_graph")
    page = graph_page(plan, frame, graph, DEFAULT)
    became = section(page, "what-each-node-became")
    assert became is not None
    table = next(b for b in became.blocks if isinstance(b, Table))
    assert list(table.header) == ["Nodes", "Post-grad nodes"]
    rows = {inline_text(r[0]): inline_text(r[1]) for r in table.rows}
    assert rows["x (13)"] == "relu"
    _node_lines_hold_their_nodes(table, graph.artifact.text())
    (post,) = [i for i in walk(became.blocks) if isinstance(i, PageLink)]
    assert post.docname == graph_named(PROVENANCE, "inductor_post_grad_graph")[2].docname


def test_output_code_page_links_its_kernels_and_the_graph_it_came_from() -> None:
    plan, frame, graph = graph_named(PROVENANCE, "inductor_output_code")
    page = graph_page(plan, frame, graph, DEFAULT)
    shown = facts(page)
    linked = [i.docname for i in shown["Kernels"] if isinstance(i, PageLink)]
    assert linked == [k.docname for k in frame.kernels if k.artifact is graph.artifact]
    (source,) = [i for i in shown["Generated from"] if isinstance(i, PageLink)]
    assert source.docname == graph_named(PROVENANCE, "inductor_post_grad_graph")[2].docname


# -- kernel pages -----------------------------------------------------------------------------


@pytest.mark.parametrize("log", [*TRITON_LOGS, AOT_CPU, PROVENANCE], ids=lambda p: p.stem)
def test_kernel_source_is_numbered_as_in_its_code(log: Path) -> None:
    checked = 0
    for plan, frame, kernel in kernels(log):
        page = kernel_page(plan, frame, kernel, DEFAULT)
        assert page.blocks[0] == ObjectTarget("kernel", kernel.name)
        assert (
            inline_text(page.title)
            == f"{plan.label} · {frame.compile.label} · " + (kernel.name[len(frame.name) + 1 :])
        )
        source = section(page, "source")
        if kernel.kernel.kind == "extern":
            assert source is None
            continue
        assert source is not None
        block = only_code(source.blocks)
        assert block.linenos and block.start >= kernel.kernel.definition_line
        code_lines = kernel.artifact.text().split("\n")
        shown = block.text.split("\n")
        # the last line may end where the source string closes
        for number, line in enumerate(shown[:-1], block.start):
            assert code_lines[number - 1] == line
        if kernel.kernel.kind.startswith("triton"):
            assert f"def {kernel.kernel.name}(" in block.text
        checked += 1
    assert checked


def test_triton_source_starts_after_its_definition_line() -> None:
    plan, frame, kernel = next(
        t for t in kernels(JIT_CUDA) if t[2].kernel.kind.startswith("triton")
    )
    block = only_code(section(kernel_page(plan, frame, kernel, DEFAULT), "source"))
    assert block.start == kernel.kernel.definition_line + 1
    assert block.text.startswith("import triton") and "@triton.jit" in block.text
    assert block.language == "python"


@pytest.mark.parametrize("log", [JIT_CUDA, AOT_CPU, PROVENANCE], ids=lambda p: p.stem)
def test_launch_excerpts_emphasize_the_launch_lines(log: Path) -> None:
    for plan, frame, kernel in kernels(log):
        page = kernel_page(plan, frame, kernel, DEFAULT)
        launches = section(page, "launches")
        if not kernel.kernel.launch_lines:
            assert launches is None and "Launched at" not in facts(page)
            continue
        assert launches is not None
        (see_below,) = [i for i in facts(page)["Launched at"] if isinstance(i, AnchorLink)]
        assert (see_below.docname, see_below.anchor) == (kernel.docname, "launches")
        code_lines = kernel.artifact.text().split("\n")
        marked = []
        for block in (b for b in launches.blocks if isinstance(b, CodeBlock)):
            shown = block.text.split("\n")
            assert shown == code_lines[block.start - 1 : block.start - 1 + len(shown)]
            for emphasized in block.emphasize:
                line = shown[emphasized - 1]
                assert kernel.kernel.name.rsplit(".", 1)[-1] in line
                marked.append(block.start + emphasized - 1)
        assert marked == kernel.kernel.launch_lines[:8]


def test_extern_kernel_has_no_source_but_its_facts() -> None:
    plan, frame, kernel = next(t for t in kernels(PROVENANCE) if t[2].kernel.kind == "extern")
    page = kernel_page(plan, frame, kernel, DEFAULT)
    assert section(page, "source") is None
    assert inline_text(facts(page)["Kind"]) == "extern"  # type: ignore[arg-type]
    assert section(page, "launches") is not None


def test_kernel_page_graph_nodes_from_provenance_and_from_comments() -> None:
    plan, frame, kernel = next(
        t for t in kernels(PROVENANCE) if t[2].kernel.name == "cpp_fused_relu_0"
    )
    tracked = section(kernel_page(plan, frame, kernel, DEFAULT), "graph-nodes")
    assert tracked is not None
    table = next(b for b in tracked.blocks if isinstance(b, Table))
    assert [inline_text(c) for c in table.rows[0]] == ["relu (6)", "x"]
    # no provenance mapping in the simple log: the Source Nodes comment names the nodes
    plan, frame, kernel = next(t for t in kernels(SIMPLE) if t[2].kernel.source_nodes)
    commented = section(kernel_page(plan, frame, kernel, DEFAULT), "graph-nodes")
    assert commented is not None
    text = inline_text(commented.blocks[0].content)  # type: ignore[union-attr]
    assert ", ".join(kernel.kernel.source_nodes) in text
    assert not any(isinstance(b, Table) for b in commented.blocks)


def test_kernel_in_two_codes_links_the_other() -> None:
    plan, frame, kernel = next(
        t
        for t in kernels(AOT_CPU)
        if t[2].artifact.name == "inductor_aot_wrapper_code" and t[2].kernel.kind == "cpp"
    )
    also = facts(kernel_page(plan, frame, kernel, DEFAULT))["Also in"]
    (other,) = [i for i in also if isinstance(i, PageLink)]
    twin = next(k for k in frame.kernels if k.docname == other.docname)
    assert twin.kernel.name == kernel.kernel.name and twin is not kernel
    assert other.text == "inductor_aot_kernel_code"


def test_stack_traces_show_your_code_unless_no_source() -> None:
    plan, frame, kernel = next(
        t for t in kernels(PROVENANCE) if t[2].kernel.name == "cpp_fused_relu_0"
    )
    with_source = only_code(section(kernel_page(plan, frame, kernel, DEFAULT), "stack-traces"))
    assert with_source.language == "pytb"
    assert "x = torch.relu(self.fc1(x))" in with_source.text
    without = only_code(section(kernel_page(plan, frame, kernel, NO_SOURCE), "stack-traces"))
    assert "torch.relu" not in without.text
    assert all('File "' in line for line in without.text.split("\n"))


# -- :no-source: and markup -------------------------------------------------------------------


def test_no_source_strips_the_code_graphs_quote() -> None:
    plan, frame, graph = graph_named(PROVENANCE, "inductor_post_grad_graph")
    shown = only_code(section(graph_page(plan, frame, graph, DEFAULT), "content")).text
    stripped = only_code(section(graph_page(plan, frame, graph, NO_SOURCE), "content")).text
    assert "# File: " in shown and ", code: x = torch.relu" in shown
    assert "# File: " in stripped and ", code: " not in stripped
    assert "torch.relu(self.fc1" not in stripped
    # lines keep their numbers, so the provenance tables still point at the right ones
    assert stripped.count("\n") == shown.count("\n")


@pytest.mark.parametrize("log", ALL_LOGS, ids=lambda p: p.stem)
def test_no_string_holds_markup_the_view_added(log: Path) -> None:
    anchor = re.compile(r"[a-z0-9-]+")
    for settings in (DEFAULT, NO_SOURCE):
        pages = [graph_page(p, f, g, settings) for p, f, g in graphs(log)]
        pages += [kernel_page(p, f, k, settings) for p, f, k in kernels(log)]
        for page in pages:
            # code blocks show the log's own text verbatim (checked above); all else is ours
            for item in walk([page.title, page.blocks], into_code=False):
                if isinstance(item, (Section, AnchorLink)) and item.anchor is not None:
                    assert anchor.fullmatch(item.anchor), item.anchor
                if isinstance(item, str):
                    for markup in ("``", ":doc:", ":torchtrace:", ":ref:", ":download:", "\\"):
                        assert markup not in item, (page.docname, item)
