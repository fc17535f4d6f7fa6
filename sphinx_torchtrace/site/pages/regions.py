"""Compile regions on a frame page and at a glance: the nested compile regions a graph
calls (and how often one traced region is reused), the output code's subgraph functions
with the kernels they launch, and the records regional Inductor logged under each
``subgraph_name`` (:mod:`...trace.analyses.regions`).

Kept apart from the frame view (one call there): most compiles log no region.
"""

from __future__ import annotations

import json
from typing import Any

from ...trace import Artifact, Kernel
from ...trace.analyses.regions import (
    BACKWARD_VARIANT,
    DYNAMO_GRAPH,
    BackwardVariant,
    Regions,
    RegionUse,
    compile_regions,
)
from ..blocks import (
    Block,
    Code,
    CodeBlock,
    Dropdown,
    Inline,
    Inlines,
    ObjectLink,
    Paragraph,
    Section,
    Table,
    capped_joined,
    joined,
    place_link,
)
from ..plan import FramePlan, TracePlan
from ..words import _

#: Graphs whose region calls are listed, in pipeline order: the user's (Dynamo's) and AOT
#: autograd's; the passes between log the same calls again.
REGION_GRAPHS = (
    DYNAMO_GRAPH,
    "aot_joint_graph",
    "aot_forward_graph",
    "aot_backward_graph",
    "aot_inference_graph",
)
#: Rows shown unfolded; a longer table is folded whole.
FOLDED_ROWS = 8
#: Compiles named on the glance line, at most.
GLANCE_COMPILES = 4
#: Tangents described in a backward variant's sentence, at most; characters of a value.
TANGENTS_SHOWN = 4
VALUE_LIMIT = 120

INTRO_TEXT = (
    "Nested compile regions (torch.compiler.nested_compile_region, the invoke_subgraph "
    "operator): Dynamo traces a region once and calls it again wherever the same identifier "
    "is called, so calls past the first are reuses of one traced region."
)
FUNCTIONS_TEXT = (
    "The output code's subgraph functions: a kernel launched inside one is launched once per "
    "call of its function, and the kernel counts below count it so."
)
VARIANTS_TEXT = (
    "torch caches a region's backward graph by the region's identifier and the metadata of "
    "the backward tangents it receives (shapes, strides, dtypes): calls of one region that "
    "got different tangents have a backward graph each, and torch logs each new one as "
    "invoke_subgraph_backward_duplicate. The output code's subgraph functions below show "
    "what Inductor compiled for each."
)
GROUPS_TEXT = (
    "The artifacts (graphs, code and the like) logged while regional Inductor compiled one "
    "subgraph on its own, grouped by their subgraph_name (the envelope's key); the timing "
    "records (chromium_event) logged under it are not counted here:"
)


def regions_section(plan: TracePlan, frame: FramePlan) -> Section | None:
    """A frame's compile regions; None when it logged none."""
    found = compile_regions(frame.compile)
    if found is None:
        return None
    blocks: list[Block] = []
    uses = _listed_uses(found)
    if uses:
        blocks.append(Paragraph([INTRO_TEXT]))
        blocks.extend(_reuse_sentences(frame, found))
        rows: list[list[Inlines]] = [
            [
                [_graph_link(frame, u.graph)],
                [Code(u.identifier)],
                [_calls_cell(u)],
                [str(u.reused)] if u.reused else ["—"],
            ]
            for u in uses
        ]
        blocks.append(_folded(Table([_("Graph"), _("Region"), _("Calls"), _("Reused")], rows)))
    if found.variants:
        blocks.append(Paragraph([VARIANTS_TEXT]))
        for variant in found.variants:
            blocks.extend(_variant_blocks(frame, variant))
    if found.functions:
        blocks.append(Paragraph([FUNCTIONS_TEXT]))
        rows = [
            [
                [_graph_link(frame, f.code)],
                [Code(f.function)],
                [_places(f.calls)],
                capped_joined([[_kernel_link(frame, f.code, k)] for k in f.kernels]),
            ]
            for f in found.functions
        ]
        header = [_("Output code"), _("Subgraph function"), _("Called from"), _("Kernels")]
        blocks.append(_folded(Table(header, rows)))
    if found.groups:
        blocks.append(Paragraph([GROUPS_TEXT]))
        for group in found.groups:
            kernels = group.kernels
            first, last = group.artifacts[0].line, group.artifacts[-1].line
            said: list[Inline] = [
                Code(group.name),
                f": {len(group.artifacts)} artifact{'s' if len(group.artifacts) > 1 else ''}, "
                f"lines {first} to {last} of the log"
                if first != last
                else f": 1 artifact, line {first} of the log",
            ]
            if kernels:
                said += [
                    f"; {len(kernels)} kernel{'s' if len(kernels) > 1 else ''}: ",
                    *capped_joined([[_kernel_link(frame, a, k)] for a, k in kernels]),
                ]
            blocks.append(Paragraph(said))
            rows = [
                [[_graph_link(frame, a)], [str(a.line)], [str(len(a.kernels))] if a.kernels else []]
                for a in group.artifacts
            ]
            table = Table([_("Record"), _("Line"), _("Kernels")], rows)
            blocks.append(_folded(table, f"artifacts under {group.name}"))
    return Section([_("Compile regions")], blocks, anchor="compile-regions")


def glance_line(plan: TracePlan) -> list[Inline] | None:
    """``Compile regions:`` for the glance: each region a compile reuses (how often), and
    the subgraphs regional Inductor compiled; None when no compile logged any."""
    parts: list[Inlines] = []
    for frame in plan.frames:
        if frame.same_as is not None:  # a rank that repeats another: said once
            continue
        found = compile_regions(frame.compile)
        if found is None:
            continue
        link: Inline = ObjectLink("frame", frame.name)
        for use in found.reused:
            nested: list[Inline] = []
            if use.inside is not None:
                nested = [f"{use.calls} in each of ", Code(use.inside[0]), "'s calls; "]
            parts.append(
                [
                    Code(use.identifier),
                    f" called {_times(use.runs)} in ",
                    link,
                    " (",
                    *nested,
                    f"one traced region, reused {_times(use.reused)}",
                    *_glance_backward(found, use.identifier),
                    ")",
                ]
            )
        if found.groups:
            names = [[Code(g.name)] for g in found.groups]
            n = len(found.groups)
            parts.append(
                [
                    f"{n} subgraph{'s' if n > 1 else ''} compiled by regional Inductor in ",
                    link,
                    " (",
                    *capped_joined(names),
                    ")",
                ]
            )
    if not parts:
        return None
    line: list[Inline] = [_("Compile regions:"), " ", *joined(parts[:GLANCE_COMPILES], "; ")]
    if len(parts) > GLANCE_COMPILES:
        line.append(f"; and {len(parts) - GLANCE_COMPILES} more")
    return line


def _glance_backward(found: Regions, identifier: str) -> list[Inline]:
    count = found.backward_count(identifier)
    return [] if count is None else [f"; {count} backward variants"]


def kernel_region_facts(kernel: Kernel, code: Artifact) -> list[tuple[str, Inlines]]:
    """A kernel page's facts on regions: the subgraph functions it is launched from and how
    many places reach it, and the ``subgraph_name`` its code was logged under."""
    facts: list[tuple[str, Inlines]] = []
    subgraphs = kernel.subgraphs
    if subgraphs:
        reach = dict(zip(kernel.launch_functions, kernel.launch_reach, strict=False))
        named: list[Inlines] = [
            [Code(f), f" (called from {_places(reach.get(f, 1))})"] for f in subgraphs
        ]
        facts.append(("In subgraph", joined(named)))
        n = kernel.calls
        facts.append(
            (
                "Launched",
                [
                    f"{n} time{'s' if n > 1 else ''} per run of the code, each call of its "
                    "subgraph counted"
                ],
            )
        )
    if code.subgraph is not None:
        facts.append(("Compiled under", [Code(code.subgraph), " (subgraph_name)"]))
    return facts


def _listed_uses(found: Regions) -> list[RegionUse]:
    """The uses in :data:`REGION_GRAPHS`' graphs (first of each name), else every use."""
    listed = [u for u in found.uses if u.graph.name in REGION_GRAPHS]
    return listed or found.uses


def _reuse_sentences(frame: FramePlan, found: Regions) -> list[Block]:
    sentences: list[Block] = []
    for use in found.reused:
        said: list[Inline] = [
            Code(use.identifier),
            f" is called {_times(use.calls)} in ",
            _graph_link(frame, use.graph),
            f" (line {use.graph.line})",
        ]
        if use.inside is not None:
            holder, runs = use.inside
            said += [", in the body of ", Code(holder), f", which runs {_times(runs)}"]
        lead = ": "
        if use.runs != use.calls:
            said.append(f": {use.runs} calls per run of the graph")
            lead = "; "
        said += [
            f"{lead}one traced region, reused {_times(use.reused)}",
            *_backward_words(found, use.identifier, "; "),
            ".",
        ]
        sentences.append(Paragraph(said))
    return sentences


def _calls_cell(use: RegionUse) -> str:
    """The places calling it, and its calls per run where a region's body holds them."""
    if use.runs == use.calls:
        return str(use.calls)
    return f"{use.calls} ({use.runs} per run)"


def _times(n: int) -> str:
    return f"{n} time{'s' if n != 1 else ''}"


def _backward_words(found: Regions, identifier: str, lead: str) -> list[Inline]:
    """``; its backward traced 2 times (2 variants, line 1235)`` where torch logged that a
    region got backward variants, else nothing."""
    count = found.backward_count(identifier)
    if count is None:
        return []
    lines = ", ".join(str(v.artifact.line) for v in found.variants_of(identifier)[:4])
    return [
        f"{lead}its backward traced {count} time{'s' if count != 1 else ''} "
        f"({count} variant{'s' if count != 1 else ''}, {BACKWARD_VARIANT} line"
        f"{'s' if ',' in lines else ''} {lines})"
    ]


def _variant_blocks(frame: FramePlan, variant: BackwardVariant) -> list[Block]:
    """One backward-variant record: the sentence, then every other field as logged."""
    said: list[Inline] = []
    said += [Code(variant.forward)] if variant.forward else ["A region (its identifier not logged)"]
    said.append(": another backward graph")
    if variant.backward:
        said += [", ", Code(variant.backward)]
    if variant.variants is not None:
        said.append(f", {variant.variants} for this identifier now")
    said += [" (", _graph_link(frame, variant.artifact), f", line {variant.artifact.line})"]
    tangents = _tangents(variant.other_fields.get("new_variant"))
    if tangents:
        said += ["; its tangents: ", *joined([[t] for t in tangents[:TANGENTS_SHOWN]], "; ")]
        if len(tangents) > TANGENTS_SHOWN:
            said.append(f"; and {len(tangents) - TANGENTS_SHOWN} more")
    said.append(".")
    other = json.dumps(variant.other_fields, indent=1, sort_keys=True, default=str)
    title: list[Inline] = [f"The record's other fields (line {variant.artifact.line})"]
    return [Paragraph(said), Dropdown(title, [CodeBlock(other, "json")])]


def _tangents(new_variant: Any) -> list[str]:
    """``arg2_1 [4, 8], stride [8, 1], torch.float32, cpu`` per tangent the record lists."""
    if not isinstance(new_variant, dict) or not isinstance(new_variant.get("tangents"), list):
        return []
    said = []
    for t in new_variant["tangents"]:
        if not isinstance(t, dict):
            continue
        parts = [
            _value(t.get("backward_input_name"), ""),
            _value(t.get("shape"), ""),
            _value(t.get("stride"), "stride "),
            _value(t.get("dtype"), ""),
            _value(t.get("device"), ""),
        ]
        said.append(", ".join(p for p in parts if p).replace(", [", " [", 1))
    return said


def _value(value: Any, label: str) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return label + (text if len(text) <= VALUE_LIMIT else text[: VALUE_LIMIT - 1] + "…")


def _places(n: int) -> str:
    return f"{n} place{'s' if n != 1 else ''}"


def _graph_link(frame: FramePlan, artifact: Artifact) -> Inline:
    """The artifact's name, a link where its graph is shown (a page or its frame page)."""
    graph = frame.graph_for(artifact)
    if graph is not None:
        shown = graph.same_as or graph.numbers_of or graph
        return place_link(shown.docname, shown.anchor, artifact.name)
    return Code(artifact.name)


def _kernel_link(frame: FramePlan, code: Artifact, kernel: Kernel) -> Inline:
    for k in frame.kernels:
        if k.artifact is code and k.kernel is kernel:
            shown = k.same_as or k.numbers_of or k
            return place_link(shown.docname, shown.anchor, kernel.name)
    return Code(kernel.name)


def _folded(table: Table, what: str = "") -> Block:
    """The table, or past :data:`FOLDED_ROWS` rows folded whole under its count."""
    if len(table.rows) <= FOLDED_ROWS:
        return table
    return Dropdown([f"The table of {len(table.rows)} {what or 'rows'}"], [table])
