"""The page of one graph, guard set or generated code of a frame: what it is, then all of it.

Also the pieces its sibling, the kernel page (:mod:`.kernel`), shares: the per-compile
cache both ask, the facts lines, node lists and the orphan rule of detail pages.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...trace import Artifact, Compile
from ...trace.analyses import compare
from ...trace.analyses.naming import function_label
from ...trace.analyses.provenance import ProvenanceView, provenance_views
from ..api_names import api_link, graph_operators
from ..artifacts import group_nodes, language_of, size_text
from ..blocks import (
    Block,
    Code,
    CodeBlock,
    Download,
    Dropdown,
    Inline,
    Inlines,
    Lines,
    ObjectLink,
    ObjectTarget,
    Page,
    PageLink,
    Paragraph,
    Section,
    Strong,
    Table,
    Target,
    WebOnly,
    inline_text,
    joined,
    object_targets,
    place_link,
)
from ..naming import shown_name
from ..plan import (
    RUN_NOT_READ,
    TITLE_SEPARATOR,
    FramePlan,
    GraphPlan,
    KernelPlan,
    PageSettings,
    TracePlan,
)
from ..source import maybe_strip
from ..words import _
from .diffs import (
    DIFF_MIN_LINES,
    folded_diff,
    near_diff,
    sizes_diff,
    sizes_only_blocks,
    whole_text,
)

ROLES = {
    "dynamo_output_graph": (
        "The FX graph Dynamo captured from the function's bytecode: the PyTorch operations it "
        "traced, with the shapes it saw."
    ),
    "dynamo_guards": (
        "The guards Dynamo installed: conditions on the inputs and globals under which the "
        "compiled code may be reused."
    ),
    "dynamo_cpp_guards_str": (
        "The guards Dynamo installed, as its C++ guard manager checks them: if one fails for new "
        "inputs, the frame is compiled again."
    ),
    "optimize_ddp_split_graph": (
        "The Dynamo graph split by DDPOptimizer into buckets, so that gradient communication "
        "overlaps with the backward pass."
    ),
    "optimize_ddp_split_child": "One bucket of the Dynamo graph split by DDPOptimizer.",
    "compiled_autograd_graph": (
        "The backward graph that compiled autograd captured from the autograd engine."
    ),
    "compiled_autograd_graph_pre_reordering": (
        "The compiled autograd graph before its nodes were reordered."
    ),
    "aot_joint_graph": (
        "AOT Autograd's joint graph: forward and backward traced together into ATen operators, "
        "before being partitioned."
    ),
    "aot_forward_graph": (
        "AOT Autograd's forward graph (ATen operators), partitioned out of the joint graph; it "
        "saves what the backward needs."
    ),
    "aot_backward_graph": (
        "AOT Autograd's backward graph (ATen operators), partitioned out of the joint graph."
    ),
    "aot_inference_graph": (
        "AOT Autograd's inference graph: the function traced into ATen operators, no gradients "
        "needed."
    ),
    "before_pre_grad_graph": (
        "The graph Inductor received, before its pre-grad passes (Torch-level fusions and "
        "rewrites)."
    ),
    "inductor_pre_grad_graph": (
        "The graph Inductor received, before its pre-grad passes (Torch-level fusions and "
        "rewrites)."
    ),
    "after_pre_grad_graph": "The graph after Inductor's pre-grad passes.",
    "before_joint_graph": (
        "The AOT graph before Inductor's joint-graph passes (pattern rewrites that see forward "
        "and backward)."
    ),
    "after_joint_graph": "The AOT graph after Inductor's joint-graph passes.",
    "before_post_grad_graph": (
        "The ATen graph before Inductor's post-grad passes (fusions, reinplacing, decompositions)."
    ),
    "inductor_post_grad_graph": (
        "The ATen graph after Inductor's post-grad passes: what Inductor lowers and schedules "
        "into kernels."
    ),
    "after_post_grad_graph": (
        "The ATen graph after Inductor's post-grad passes: what Inductor lowers and schedules "
        "into kernels."
    ),
    "fx_graph_runnable": (
        "A standalone script that rebuilds this graph with random inputs of the same shapes: run "
        "it to reproduce the compilation without the rest of the program."
    ),
    "inductor_output_code": (
        "The Python module Inductor generated: the kernels, then call(), which allocates buffers "
        "and launches them in order."
    ),
    "inductor_aot_wrapper_code": (
        "AOTInductor's C++ wrapper: loads the weights and launches the kernels in order."
    ),
    "inductor_aot_kernel_code": "AOTInductor's C++ kernels, compiled into the shared library.",
    "exported_program": (
        "The program torch.export produced: an ATen graph with its input and output signature."
    ),
}

#: Graphs that are a pass of their own, never the forward or backward copy of another.
_UNPHASED = ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph", "dynamo_output_graph")
#: Relative widths of a provenance table: the node list, then what the nodes map to.
PROVENANCE_WIDTHS = (3, 2)
FACTS_CLASS = "torchtrace-facts"
BREADCRUMB = " › "


# -- shared with the kernel page ------------------------------------------------------------


def breadcrumbs(plan: TracePlan, frame: FramePlan, trail: Inlines) -> Lines:
    """Trace › frame › this page (› with the graph between for a kernel): where a page of
    thousands sits, each step a link back."""
    parts: list[Inline] = [PageLink(plan.index_docname, plan.label), BREADCRUMB]
    label = function_label(frame.rank, frame.compile)
    frame_title = plan.frame_title(frame, label).split(TITLE_SEPARATOR, 1)[1]
    parts += [PageLink(frame.docname, frame_title), BREADCRUMB, *trail]
    return Lines([parts], classes=["torchtrace-breadcrumbs"])


def detail_page(docname: str, title: Inlines, settings: PageSettings) -> Page:
    """A graph or kernel page: an orphan, so the sidebar does not list thousands of them,
    unless one assembled document (LaTeX, singlehtml) needs every page in a toctree."""
    return Page(docname, list(title), orphan=not settings.detail_toctree)


@dataclass
class CompileFacts:
    """What every graph and kernel page of one compile asks, computed once per compile."""

    compile: Compile
    views: list[ProvenanceView]
    _lines: dict[int, list[str]] = field(default_factory=dict)

    def lines_of(self, artifact: Artifact) -> list[str]:
        """The lines of one of the compile's artifacts (read from the log once, not per page)."""
        lines = self._lines.get(artifact.ordinal)
        if lines is None:
            lines = self._lines[artifact.ordinal] = artifact.text().split("\n")
        return lines


_FACTS: OrderedDict[int, CompileFacts] = OrderedDict()
#: Compiles remembered at once: pages are built frame by frame, so a few suffice.
_FACTS_KEPT = 16


def compile_facts(compile_: Compile) -> CompileFacts:
    """The cached :class:`CompileFacts` of a compile (the compile is held, so its id is not
    reused by another while cached)."""
    hit = _FACTS.get(id(compile_))
    if hit is None or hit.compile is not compile_:
        hit = _FACTS[id(compile_)] = CompileFacts(compile_, provenance_views(compile_))
        while len(_FACTS) > _FACTS_KEPT:
            _FACTS.popitem(last=False)
    _FACTS.move_to_end(id(compile_))
    return hit


def fact(label: str, *value: Inline) -> list[Inline]:
    """One ``Label: value`` line of a page's facts."""
    return [f"{label}: ", *value]


def facts_block(lines: Sequence[Inlines]) -> Lines:
    return Lines(lines, classes=(FACTS_CLASS,))


def node_list(members: Sequence[tuple[str, int | None]]) -> Code:
    """Graph nodes with their line, as one literal (``a (4), b (7)``): tables list thousands,
    and one literal per name would be thousands more nodes for Sphinx to process."""
    return Code(
        ", ".join(node + (f" ({line})" if line is not None else "") for node, line in members)
    )


def operator_names(operators: Sequence[str]) -> list[Inline]:
    """Operators as code, each a link into PyTorch's docs where the project maps them."""
    return joined([[api_link(op) or Code(op)] for op in operators])


def names(items: Sequence[str]) -> list[Inline]:
    """Names as one literal, or nothing for none."""
    return [Code(", ".join(items))] if items else []


def kernel_base(key: str) -> str:
    """A provenance kernel key without its debug handle: ``cpp_fused_relu_0:2`` → its name."""
    head, sep, tail = key.rpartition(":")
    return head if sep and tail.isdigit() else key


def kernels_in(frame: FramePlan, artifact: Artifact) -> list[KernelPlan]:
    return [k for k in frame.kernels if k.artifact is artifact]


def numbered_anchor(anchor: str, index: int) -> str:
    """``anchor``, then ``anchor-2`` ...: a section that a page may repeat (one per mapping)."""
    return anchor if index == 0 else f"{anchor}-{index + 1}"


# -- the graph page -------------------------------------------------------------------------


def graph_page(plan: TracePlan, frame: FramePlan, graph: GraphPlan, settings: PageSettings) -> Page:
    """The page of one graph (or guards, or generated code) too large for its frame page."""
    title = _title(frame, graph, _phase(frame.compile, graph.artifact))
    page = detail_page(graph.docname, [plan.detail_title(frame, title)], settings)
    page.blocks.append(ObjectTarget("graph", graph.name))
    page.blocks.append(breadcrumbs(plan, frame, [title]))
    page.blocks.extend(graph_blocks(plan, frame, graph, settings))
    return page


def inline_graph(
    plan: TracePlan, frame: FramePlan, graph: GraphPlan, settings: PageSettings
) -> Dropdown:
    """A graph shown on its frame page: what its page would show, folded under its name,
    its sections as headings of the fold (a section cannot sit inside a fold)."""
    artifact = graph.artifact
    title = _title(frame, graph, _phase(frame.compile, artifact))
    text = maybe_strip(artifact.text(), settings.no_source)
    names = [graph.name, *plan.aliases_of(graph)]
    blocks: list[Block] = list(object_targets([("graph", name, "") for name in names]))
    for block in graph_blocks(plan, frame, graph, settings, anchors=f"{graph.anchor}-"):
        if isinstance(block, Section):
            if block.anchor:
                blocks.append(Target(block.anchor))
            if block.anchor != f"{graph.anchor}-content":  # the fold's title says what it is
                blocks.append(Paragraph([Strong(inline_text(block.title))]))
            blocks.extend(block.blocks)
        else:
            blocks.append(block)
    size = _size_text(artifact, text)
    summary: list[Inline] = [f"{title} ({size})"]
    if artifact.name in RUN_NOT_READ:  # its text is not shown, a book has no download
        script = WebOnly([": a script to download"], [": a script"])
        summary = [f"{title} ({size}", script, ")"]
    return Dropdown(summary, blocks, anchor=graph.anchor)


def graph_blocks(
    plan: TracePlan,
    frame: FramePlan,
    graph: GraphPlan,
    settings: PageSettings,
    anchors: str = "",
) -> list[Block]:
    """A graph's role, facts, the provenance tables that start or end at it, and its whole
    text; ``anchors`` prefixes its sections' anchors (several graphs share a frame page)."""
    artifact = graph.artifact
    views = compile_facts(frame.compile).views
    text = maybe_strip(artifact.text(), settings.no_source)
    phase = _phase(frame.compile, artifact)
    blocks: list[Block] = [Paragraph([_role(artifact)])]
    identical = [g for g in frame.graphs if g.same_as is graph]
    facts = _facts(frame, graph, views, phase, text)
    if identical:
        facts.append(fact("Also", *joined([_identical_text(frame, g) for g in identical])))
    blocks.append(facts_block(facts))
    if artifact.name == "fx_graph_runnable":
        blocks.append(Paragraph(_RUNNABLE))
    shown = [artifact, *(g.artifact for g in identical)]  # theirs have no page
    # numbered over all of them: two identical graphs with mappings are two sections each
    tables = [
        *_kernels_by_node(frame, shown, views, anchors),
        *_what_each_node_became(frame, shown, views, anchors),
    ]
    blocks.extend(tables)
    if artifact.name in RUN_NOT_READ and graph.inline:  # facts link the script, not shown
        return blocks
    blocks.append(
        # node tables give line numbers: then the whole text, not a diff
        (None if tables else _changes_section(plan, frame, graph, text, settings, anchors))
        or Section(
            ["Content"],
            [CodeBlock(text, language_of(artifact), linenos=True)],
            anchor=anchors + "content",
        )
    )
    return blocks


def _identical_text(frame: FramePlan, graph: GraphPlan) -> list[Inline]:
    """``after_pre_grad_graph`` (unchanged by Inductor's pre-grad passes): a graph shown here."""
    why = f"unchanged by {graph.unchanged_by}" if graph.unchanged_by else "the same text"
    return [Code(shown_name(graph.name[len(frame.name) + 1 :])), f" ({why})"]


# -- a recompile's graph, as a diff -----------------------------------------------------------


def _changes_section(
    plan: TracePlan,
    frame: FramePlan,
    graph: GraphPlan,
    text: str,
    settings: PageSettings,
    anchors: str = "",
) -> Section | None:
    """A recompile's graph nearly the same as the previous compile's: the changes, with a
    link to that graph's page and the whole text as a download (guards run to 300 KB)."""
    found = _previous_graph(plan, frame, graph)
    if found is None or graph.inline:  # a fold shows the whole text, numbered
        return None
    previous_frame, previous = found
    lines = text.split("\n")
    if len(lines) < DIFF_MIN_LINES:
        return None
    old = maybe_strip(previous.artifact.text(), settings.no_source).split("\n")
    before, after = (
        f"{previous_frame.compile.label} {_title(previous_frame, previous, '')}",
        (f"{frame.compile.label} {_title(frame, graph, '')}"),
    )
    diff = near_diff(old, lines, before, after)
    link = place_link(previous.docname, previous.anchor, f"{previous_frame.compile.label}'s")
    whole = Download(graph.raw_path, "the whole text")
    if diff is None:
        changed = compare.sizes_only_changes(old, lines)
        if not changed:
            return None
        first, unshown = sizes_diff(old, lines, before, after)
        return Section(
            [_("Changes since the previous compile")],
            sizes_only_blocks(
                ["The same graph as ", link],
                changed,
                len(lines),
                first,
                unshown,
                whole_text(graph.raw_path, graph.artifact.line),
            ),
            anchor=anchors + "changes",
        )
    if not diff:
        intro: list[Inline] = ["The same text as ", link, WebOnly([" (", whole, ")"]), "."]
        return Section(
            [_("Changes since the previous compile")],
            [Paragraph(intro)],
            anchor=anchors + "changes",
        )
    intro = [
        "Nearly the same as ",
        link,
        " (lines starting with ",
        Code("-"),
        " are its, with ",
        Code("+"),
        " this one's)",
        WebOnly(["; ", whole, " is a download"]),
        ".",
    ]
    return Section(
        ["Changes since the previous compile"],
        [Paragraph(intro), *folded_diff(diff)],
        anchor=anchors + "changes",
    )


def _previous_graph(
    plan: TracePlan, frame: FramePlan, graph: GraphPlan
) -> tuple[FramePlan, GraphPlan] | None:
    """The same-named graph (same occurrence) of the frame's previous compile, if paged."""
    previous = compare.previous_compile(frame.rank, frame.compile)
    previous_frame = plan.frame_for(previous) if previous is not None else None
    if previous_frame is None:
        return None
    short = graph.name[len(frame.name) + 1 :]
    for g in previous_frame.graphs:
        if g.name[len(previous_frame.name) + 1 :] == short:
            return previous_frame, g
    return None


_RUNNABLE: list[Inline] = [
    "Run it with ",
    Code("python"),
    " on a machine with the same PyTorch version to reproduce this compilation.",
]


def _phase(compile_: Compile, artifact: Artifact) -> str:
    """``forward`` or ``backward`` for an Inductor graph logged once per pass of a training
    compile (two of the same name under one compile id), else empty."""
    same_name = compile_.artifacts_named(artifact.name)
    if (
        not compile_.artifacts_named("aot_backward_graph")
        or len(same_name) != 2
        or artifact.name in _UNPHASED
    ):
        return ""
    return "forward" if artifact is same_name[0] else "backward"


def _title(frame: FramePlan, graph: GraphPlan, phase: str) -> str:
    """``dynamo_output_graph``, ``inductor_output_code (backward)``: the graph on its frame."""
    short = shown_name(graph.name[len(frame.name) + 1 :])
    return short + (f" ({phase})" if phase else "")


def _role(artifact: Artifact) -> str:
    known = ROLES.get(artifact.name) or ROLES.get(artifact.event)
    if known:
        return known
    what = "A graph" if artifact.is_graph else "An artifact"
    return f"{what} logged by {artifact.event}."


def _facts(
    frame: FramePlan,
    graph: GraphPlan,
    views: Sequence[ProvenanceView],
    phase: str,
    text: str,
) -> list[list[Inline]]:
    artifact = graph.artifact
    frame_link: list[Inline] = [ObjectLink("frame", frame.name)]
    if phase:
        frame_link.append(f", {phase} pass")
    # folded on its frame page, whose title says its size: neither is said again
    lines = (
        []
        if graph.inline
        else [
            fact("Frame", *frame_link),
            fact("Size", _size_text(artifact, text)),
        ]
    )
    lines.append(fact("Logged", _logged_text(artifact)))
    if graph.raw_path:  # a line that print (no downloads) leaves out
        download: list[Inline] = [
            WebOnly(fact("Download", Download(graph.raw_path, _download_text(artifact))))
        ]
        lines.append(download)
    operators = graph_operators(text) if artifact.is_graph else []
    if operators:
        lines.append(fact("Operators", *operator_names(operators)))
    kernels = kernels_in(frame, artifact)
    if kernels:
        links: list[Inlines] = [[place_link(k.docname, k.anchor, k.kernel.name)] for k in kernels]
        lines.append(fact("Kernels", *joined(links)))
    for view in views:
        post_page = _post_grad_page(frame, view)
        if view.code is artifact and post_page is not None and view.post_grad is not None:
            link = place_link(post_page.docname, post_page.anchor, view.post_grad.name)
            lines.append(fact("Generated from", link, " (provenance tracking)"))
    return lines


def _size_text(artifact: Artifact, text: str) -> str:
    out = size_text(artifact.size)
    if artifact.node_count is not None:
        out += f", {artifact.node_count} node" + ("s" if artifact.node_count != 1 else "")
    line_count = text.rstrip("\n").count("\n") + 1
    return out + f", {line_count} lines"


def _logged_text(artifact: Artifact) -> str:
    kind = f" ({artifact.event} record)" if artifact.event != artifact.name else ""
    return f"line {artifact.line} of the log{kind}"


def _download_text(artifact: Artifact) -> str:
    return "runnable script (.py)" if artifact.name == "fx_graph_runnable" else "raw text"


def _post_grad_page(frame: FramePlan, view: ProvenanceView) -> GraphPlan | None:
    return frame.graph_for(view.post_grad) if view.post_grad is not None else None


def _code_page(frame: FramePlan, view: ProvenanceView) -> GraphPlan | None:
    return frame.graph_for(view.code) if view.code is not None else None


def _kernels_by_node(
    frame: FramePlan,
    artifacts: Sequence[Artifact],
    views: Sequence[ProvenanceView],
    anchors: str = "",
) -> list[Block]:
    """On a post-grad graph (and the identical ones it stands for): its nodes grouped by
    the kernels that compute them, one section per mapping."""
    mapped = [v for a in artifacts for v in views if v.post_grad is a and v.post_to_kernels]
    sections: list[Block] = []
    for index, view in enumerate(mapped):
        intro: list[Inline] = [
            "From Inductor's provenance tracking: the nodes of this graph (with their line), "
            "grouped by the kernels that compute them"
        ]
        code_page = _code_page(frame, view)
        if code_page is not None and view.code is not None:
            intro += [" in ", place_link(code_page.docname, code_page.anchor, view.code.name)]
        intro.append(".")
        rows: list[list[Inlines]] = [
            [[node_list(members)], _kernel_links(frame, keys, view.code)]
            for keys, members in group_nodes(view.post_to_kernels, view.post_node_lines)
        ]
        table = Table([_("Nodes"), _("Kernels")], rows, widths=PROVENANCE_WIDTHS)
        sections.append(
            Section(
                ["Kernels generated from each node"],
                [Paragraph(intro), table],
                anchor=numbered_anchor(anchors + "kernels-by-node", index),
            )
        )
    return sections


def _kernel_links(frame: FramePlan, keys: Sequence[str], code: Artifact | None) -> list[Inline]:
    """Kernel keys, each a link to its kernel's page where the code has one."""
    pages: dict[str, KernelPlan] = {}
    for k in kernels_in(frame, code) if code is not None else []:
        pages.setdefault(k.kernel.name, k)
    parts: list[Inlines] = []
    for key in keys:
        found = pages.get(kernel_base(key))
        parts.append(
            [place_link(found.docname, found.anchor, key)] if found is not None else [Code(key)]
        )
    return joined(parts)


def _what_each_node_became(
    frame: FramePlan,
    artifacts: Sequence[Artifact],
    views: Sequence[ProvenanceView],
    anchors: str = "",
) -> list[Block]:
    """On a pre-grad graph (and the identical ones it stands for): its nodes grouped by the
    post-grad nodes made from them, one section per mapping."""
    mapped = [v for a in artifacts for v in views if v.pre_grad is a and v.pre_to_post]
    sections: list[Block] = []
    for index, view in enumerate(mapped):
        intro: list[Inline] = [
            "From Inductor's provenance tracking: the nodes of this graph (with their line), "
            "grouped by the post-grad nodes"
        ]
        post_page = _post_grad_page(frame, view)
        if post_page is not None and view.post_grad is not None:
            intro += [" of ", place_link(post_page.docname, post_page.anchor, view.post_grad.name)]
        intro.append(" made from them.")
        rows: list[list[Inlines]] = [
            [[node_list(members)], names(targets)]
            for targets, members in group_nodes(view.pre_to_post, view.pre_node_lines)
        ]
        table = Table([_("Nodes"), _("Post-grad nodes")], rows, widths=PROVENANCE_WIDTHS)
        sections.append(
            Section(
                ["What each node became"],
                [Paragraph(intro), table],
                anchor=numbered_anchor(anchors + "what-each-node-became", index),
            )
        )
    return sections
