"""The page of one kernel (or extern call) of generated code: what it computes, for which
graph nodes and lines of the user's code, where the wrapper launches it, and its source."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...trace import Artifact, Kernel
from ...trace.analyses.provenance import ProvenanceView, kernel_stack_traces
from ...trace.analyses.regions import tritonparse_name
from ..artifacts import group_nodes, language_of
from ..blocks import (
    AnchorLink,
    Block,
    Code,
    CodeBlock,
    Dropdown,
    Inline,
    Inlines,
    ObjectLink,
    ObjectTarget,
    Page,
    Paragraph,
    Section,
    Strong,
    Table,
    Target,
    inline_text,
    joined,
    object_targets,
    place_link,
)
from ..naming import shown_name
from ..plan import FramePlan, GraphPlan, KernelPlan, PageSettings, TracePlan
from ..source import maybe_strip
from ..words import _
from .graph import (
    BREADCRUMB,
    PROVENANCE_WIDTHS,
    breadcrumbs,
    compile_facts,
    detail_page,
    fact,
    facts_block,
    kernel_base,
    names,
    node_list,
    operator_names,
)
from .regions import kernel_region_facts

KERNEL_KIND_MEANINGS = {
    "triton_pointwise": (
        "A Triton pointwise kernel: every output element is computed on its own from the inputs "
        "at the same position (fused elementwise operations)."
    ),
    "triton_reduction": (
        "A Triton reduction kernel: it reduces along a dimension (sum, max, mean, softmax "
        "statistics) in a loop over blocks, for reductions too long for one block."
    ),
    "triton_persistent_reduction": (
        "A Triton persistent reduction: the whole reduced dimension fits in one block, so it is "
        "loaded once and reduced without a loop."
    ),
    "triton_template": (
        "A Triton template kernel: one of Inductor's hand-written templates (matrix multiply, "
        "convolution ...) specialized to these shapes, possibly autotuned, with the following "
        "operations fused into its epilogue."
    ),
    "triton_foreach": (
        "A Triton foreach kernel: the same elementwise operation applied to a list of tensors in "
        "one launch (optimizer steps, for example)."
    ),
    "triton": (
        "A Triton kernel that is not a pointwise, reduction or template kernel (a user-defined "
        "Triton kernel, for example)."
    ),
    "combo": (
        "A combo kernel: several independent Triton kernels fused side by side into one launch, "
        "to save launch overhead."
    ),
    "cpp": (
        "A C++ kernel Inductor generated for the CPU: loops, vectorized and parallelized with "
        "OpenMP, compiled by the host C++ compiler."
    ),
    "cuda": "A CUDA C++ kernel (a CUTLASS template, for example) compiled with nvcc.",
    "extern": (
        "An extern kernel: a call into an existing library operator (ATen, a BLAS matrix "
        "multiply, a convolution library) rather than generated code."
    ),
}

#: Lines of wrapper code shown around each launch.
CONTEXT_LINES = 3
#: Launches shown; a kernel launched in a loop of hundreds of layers would fill the page.
MAX_LAUNCHES = 8
#: Post-grad graphs that a ``Source Nodes`` comment names nodes of, least preferred first.
_POST_GRAD_NAMES = ("after_post_grad_graph", "inductor_post_grad_graph")
LAUNCHES_ANCHOR = "launches"


def kernel_page(
    plan: TracePlan, frame: FramePlan, kernel: KernelPlan, settings: PageSettings
) -> Page:
    """The page of one kernel of code too large for its frame page: its kind, facts, source,
    launches, graph nodes and stacks."""
    short = shown_name(kernel.name[len(frame.name) + 1 :])
    page = detail_page(kernel.docname, [plan.detail_title(frame, short)], settings)
    code: list[Inline] = []
    if kernel.code is not None:
        code = [code_link(kernel), BREADCRUMB]
    page.blocks.append(ObjectTarget("kernel", kernel.name))
    page.blocks.append(breadcrumbs(plan, frame, [*code, short]))
    page.blocks.extend(kernel_blocks(frame, kernel, settings))
    return page


def inline_kernel(
    plan: TracePlan, frame: FramePlan, kernel: KernelPlan, settings: PageSettings
) -> Dropdown:
    """A kernel of code its frame page shows, folded there: what its page would show but its
    source and launches, which are lines of that code (linked), its sections as headings."""
    short = kernel.name[len(frame.name) + 1 :]
    names = [kernel.name, *plan.aliases_of(kernel)]
    blocks: list[Block] = list(object_targets([("kernel", name, "") for name in names]))
    for block in kernel_blocks(frame, kernel, settings, anchors=f"{kernel.anchor}-"):
        if isinstance(block, Section):
            if block.anchor:
                blocks.append(Target(block.anchor))
            blocks.append(Paragraph([Strong(inline_text(block.title))]))
            blocks.extend(block.blocks)
        else:
            blocks.append(block)
    return Dropdown(
        [f"{short} ({kernel.kernel.kind.replace('_', ' ')})"], blocks, anchor=kernel.anchor
    )


def kernel_blocks(
    frame: FramePlan, kernel: KernelPlan, settings: PageSettings, anchors: str = ""
) -> list[Block]:
    """A kernel's kind and facts; then, on its own page, its source and where the wrapper
    launches it; then the graph nodes it computes and where they came from in the user's
    code.  ``anchors`` prefixes section anchors (several kernels share a frame page)."""
    k = kernel.kernel
    blocks: list[Block] = [
        Paragraph([KERNEL_KIND_MEANINGS.get(k.kind, f"A kernel of kind {k.kind}.")]),
        facts_block(_facts(frame, kernel)),
    ]
    if not kernel.inline:  # folded beside its code, it would repeat lines shown there
        if k.kind != "extern":
            blocks.append(Section([_("Source")], [_source_block(kernel)], anchor="source"))
        blocks.extend(_launches(frame, kernel, settings.no_source))
    blocks.extend(_graph_nodes(frame, kernel, anchors))
    blocks.extend(_stack_traces(frame, k, settings.no_source, anchors))
    return blocks


def code_link(kernel: KernelPlan, text: str | None = None) -> Inline:
    """A link to the output code a kernel was generated in, on its page or its frame's."""
    code = kernel.code
    if code is None:
        return Code(text or kernel.artifact.name)
    return place_link(code.docname, code.anchor, text or kernel.artifact.name)


def _facts(frame: FramePlan, kernel: KernelPlan) -> list[list[Inline]]:
    k = kernel.kernel
    kind: list[Inline] = [k.kind.replace("_", " ")]
    if k.backend and k.backend != k.kind:
        kind += [" (", Code(k.backend), " backend)"]
    where: Inline = code_link(kernel) if kernel.code is not None else Code(kernel.artifact.name)
    lines = [
        fact("Kind", *kind),
        fact("Frame", ObjectLink("frame", frame.name)),
        fact("Generated in", where, f", line {k.definition_line}"),
    ]
    if k.launch_lines:
        numbers = ", ".join(str(n) for n in k.launch_lines)
        plural = "s" if len(k.launch_lines) > 1 else ""
        if kernel.inline:
            lines.append(fact("Launched at", f"line{plural} {numbers} of ", code_link(kernel)))
        else:
            see_below = AnchorLink(kernel.docname, LAUNCHES_ANCHOR, "see below")
            lines.append(fact("Launched at", f"line{plural} {numbers} (", see_below, ")"))
    others = [o for o in frame.kernels if o.kernel.name == k.name and o is not kernel and o.shown]
    if others:
        links: list[Inlines] = [[place_link(o.docname, o.anchor, o.artifact.name)] for o in others]
        lines.append(fact("Also in", *joined(links)))
    lines.extend(fact(label, *value) for label, value in kernel_region_facts(k, kernel.artifact))
    lines.extend(fact(label, *value) for label, value in _key_facts(frame, k))
    if k.source_nodes:
        lines.append(fact("Source nodes", *names(k.source_nodes)))
    if k.aten_ops:
        lines.append(fact("ATen operators", *operator_names(k.aten_ops)))
    return lines


def _key_facts(frame: FramePlan, k: Kernel) -> list[tuple[str, Inlines]]:
    """The names other tools give the kernel, so that their output leads here: the file
    Inductor wrote it to (its ``# kernel path:`` comment, which a profiler's source view and
    tritonparse's trace name) and tritonparse's name for its compile's file."""
    facts: list[tuple[str, Inlines]] = []
    if k.path:
        facts.append(("Kernel path", [Code(k.path)]))
    if k.kind != "extern" and k.backend in ("triton", "aoti_triton"):
        name = tritonparse_name(frame.compile.id)
        if name is not None:
            facts.append(("tritonparse", [Code(f"{name}.ndjson"), ", kernel ", Code(k.name)]))
    return facts


# -- graph nodes ----------------------------------------------------------------------------


def _graph_nodes(frame: FramePlan, kernel: KernelPlan, anchors: str = "") -> list[Block]:
    """The post-grad nodes the kernel computes: from provenance tracking where a mapping
    names the kernel, else from its ``Source Nodes`` comment."""
    for view in _matching_views(frame, kernel.artifact):
        nodes = _nodes_of(view, kernel.kernel.name)
        if nodes:
            return [_tracked_nodes(frame, view, nodes, anchors)]
    if kernel.kernel.source_nodes:
        return [_commented_nodes(frame, kernel, anchors)]
    return []


def graph_nodes_of(frame: FramePlan, kernel: KernelPlan) -> list[str]:
    """The post-grad nodes a generated kernel computes: its ``Source Nodes`` comment, else
    the compile's node mapping (provenance tracking); empty where the log has neither."""
    if kernel.kernel.source_nodes:
        return list(kernel.kernel.source_nodes)
    for view in _matching_views(frame, kernel.artifact):
        nodes = _nodes_of(view, kernel.kernel.name)
        if nodes:
            return nodes
    return []


def _matching_views(frame: FramePlan, artifact: Artifact) -> list[ProvenanceView]:
    """The provenance views whose code the kernel was generated in (AOTInductor's kernel
    file is no pane of its own: its kernels are those the C++ wrapper calls)."""
    views = compile_facts(frame.compile).views
    matching = [v for v in views if v.code is artifact]
    if not matching and artifact.name == "inductor_aot_kernel_code":
        matching = [v for v in views if v.cpp_code is not None]
    return matching


def _nodes_of(view: ProvenanceView, kernel_name: str) -> list[str]:
    """Post-grad nodes mapped to any key of this kernel (with or without a debug handle)."""
    nodes: list[str] = []
    for key, posts in sorted(view.kernel_to_post.items()):
        if kernel_base(key) == kernel_name:
            nodes.extend(n for n in posts if n not in nodes)
    return nodes


def _tracked_nodes(
    frame: FramePlan, view: ProvenanceView, nodes: list[str], anchors: str = ""
) -> Section:
    post_page = frame.graph_for(view.post_grad) if view.post_grad is not None else None
    graph: Inline = (
        place_link(post_page.docname, post_page.anchor, view.post_grad.name)
        if post_page is not None and view.post_grad is not None
        else "the post-grad graph"
    )
    intro: list[Inline] = [
        "From Inductor's provenance tracking: the nodes of ",
        graph,
        " this kernel computes (with their line), grouped by the pre-grad nodes they were made "
        "from.",
    ]
    rows: list[list[Inlines]] = [
        [[node_list(members)], names(pre)]
        for pre, members in group_nodes(view.post_to_pre, view.post_node_lines, nodes)
    ]
    table = Table([_("Post-grad nodes"), _("From pre-grad nodes")], rows, widths=PROVENANCE_WIDTHS)
    return Section(
        [_("Graph nodes it computes")], [Paragraph(intro), table], anchor=anchors + "graph-nodes"
    )


def _commented_nodes(frame: FramePlan, kernel: KernelPlan, anchors: str = "") -> Section:
    intro: list[Inline] = ["The nodes named in the kernel's ", Code("Source Nodes"), " comment"]
    post_graph = _post_grad_graph_before(frame, kernel.artifact)
    if post_graph is not None:
        intro += [
            ", in ",
            place_link(post_graph.docname, post_graph.anchor, post_graph.artifact.name),
        ]
    intro += [": ", *names(kernel.kernel.source_nodes), "."]
    title = [_("Graph nodes it computes")]
    return Section(title, [Paragraph(intro)], anchor=anchors + "graph-nodes")


def _post_grad_graph_before(frame: FramePlan, code: Artifact) -> GraphPlan | None:
    """The post-grad graph logged last before the code (Inductor's own name preferred)."""
    found = [
        g
        for name in _POST_GRAD_NAMES
        for g in frame.graphs
        if g.artifact.name == name and g.artifact.ordinal < code.ordinal
    ]
    return found[-1] if found else None


# -- stacks, launches, source ---------------------------------------------------------------


def _stack_traces(
    frame: FramePlan, kernel: Kernel, no_source: bool, anchors: str = ""
) -> list[Block]:
    traces = kernel_stack_traces(frame.compile, kernel.name, not no_source)
    if not traces:
        return []
    intro = (
        "From Inductor's provenance tracking: the Python stack of each operation this kernel "
        "computes, your code first" + (", one after the other" if len(traces) > 1 else "") + "."
    )
    # one block for all the stacks: a block per stack was hundreds of blocks on a big trace
    text = "\n\n".join(trace.strip("\n") for trace in traces)
    return [
        Section(
            ["Where it came from in your code"],
            [Paragraph([intro]), CodeBlock(text, "pytb")],
            anchor=anchors + "stack-traces",
        )
    ]


@dataclass
class _Window:
    """Lines ``first``..``last`` (1-based, inclusive) of the code, around some launches."""

    first: int
    last: int
    launches: list[int]


def _launch_windows(launch_lines: Sequence[int], line_count: int) -> list[_Window]:
    """Excerpts around the first launches, merged where they touch or overlap."""
    windows: list[_Window] = []
    for launch in launch_lines[:MAX_LAUNCHES]:
        if not 1 <= launch <= line_count:
            continue
        first = max(1, launch - CONTEXT_LINES)
        last = min(line_count, launch + CONTEXT_LINES)
        if windows and first <= windows[-1].last + 1:
            windows[-1].last = max(last, windows[-1].last)
            windows[-1].launches.append(launch)
        else:
            windows.append(_Window(first, last, [launch]))
    return windows


def _launches(frame: FramePlan, kernel: KernelPlan, no_source: bool) -> list[Block]:
    launch_lines = kernel.kernel.launch_lines
    if not launch_lines:
        return []
    lines = compile_facts(frame.compile).lines_of(kernel.artifact)
    language = language_of(kernel.artifact)
    blocks: list[Block] = []
    for window in _launch_windows(launch_lines, len(lines)):
        # line by line, so that every line keeps its number with :no-source:
        excerpt = [maybe_strip(line, no_source) for line in lines[window.first - 1 : window.last]]
        blocks.append(
            CodeBlock(
                "\n".join(excerpt),
                language,
                linenos=True,
                start=window.first,
                emphasize=[launch - window.first + 1 for launch in window.launches],
            )
        )
    if len(launch_lines) > MAX_LAUNCHES:
        blocks.append(Paragraph([f"And {len(launch_lines) - MAX_LAUNCHES} more launches."]))
    return [Section([_("Where the wrapper launches it")], blocks, anchor=LAUNCHES_ANCHOR)]


def _source_block(kernel: KernelPlan) -> CodeBlock:
    """The kernel's own source, numbered as in the code it was generated in: for a kernel
    compiled from a string (``async_compile.triton('name', '''...''')``), that string."""
    k = kernel.kernel
    quoted = k.source.split("'''")
    if len(quoted) >= 3 and k.backend not in ("extern", "aoti"):
        body = quoted[1].lstrip("\n")
        start = k.definition_line + quoted[0].count("\n") + len(quoted[1]) - len(body)
        language = "cpp" if k.kind == "cpp" else "python"
    else:
        body, start = k.source, k.definition_line
        language = "cpp" if language_of(kernel.artifact) == "cpp" else "python"
    return CodeBlock(body, language, linenos=True, start=start)
