"""The kernels of the compile's output code, generated and library (extern)."""

from __future__ import annotations

from ....trace.analyses.run_info import torch_version
from ...blocks import (
    Block,
    Code,
    Inline,
    Inlines,
    ObjectTarget,
    Paragraph,
    Section,
    Table,
    place_link,
)
from ...plan import FramePlan, KernelPlan
from ...words import _
from ..kernel import code_link, graph_nodes_of, inline_kernel
from .folds import drop_empty_columns, folded_if_long, folded_if_many
from .view import FrameView, truncate

#: Characters of a kernel's source nodes shown in its row.
SOURCE_NODES_LIMIT = 120
#: Call lines an extern kernel's row names before "and N more".
EXTERN_LINES = 5


def section(view: FrameView) -> Section | None:
    """The kernels of the compile's output code, a row each, and the small ones shown."""
    kernels = view.frame.kernels
    if not kernels:
        return None
    bases = {k.numbers_of_label for k in kernels if k.numbers_of is not None}
    # every kernel an earlier compile's, but for its numbers: said once, not on every row
    said_once = len(bases) == 1 and all(k.numbers_of is not None for k in kernels)
    short = _code_names(view)
    rows = [
        row
        for k in kernels
        for row in _kernel_rows(view.frame, k, short[id(k.artifact)], noted=not said_once)
    ]
    blocks: list[Block] = [ObjectTarget("kernel", k.name) for k in kernels if k.numbers_of]
    if said_once:
        blocks.append(
            Paragraph(
                [
                    f"Every kernel is {next(iter(bases))}'s (its source the same, or the same "
                    "but for its numbers): each links to that compile's kernel page."
                ]
            )
        )
    if any(k.kernel.kind == "extern" for k in kernels):
        blocks.append(
            Paragraph(
                [
                    "Generated kernels, then the library (extern) kernels the code calls, each "
                    "once with the lines that call it and the graph nodes it computes."
                ]
            )
        )
    header, rows, widths = drop_empty_columns(
        ["Kernel", "Kind", "In", "Source nodes"], rows, [4, 2, 2, 3]
    )
    blocks += _unknown_nodes_note(view)
    table = Table(header, rows, widths, classes=["torchtrace-kernels"])
    blocks.append(folded_if_long(table, "kernels"))
    shown = [inline_kernel(view.plan, view.frame, k, view.settings) for k in kernels if k.inline]
    blocks += folded_if_many(shown, "kernels shown on this page")
    return Section([_("Kernels")], blocks, anchor="kernels")


def _code_names(view: FrameView) -> dict[int, str]:
    """What each output code is called in the rows, by the artifact's id: ``forward code``
    and ``backward code`` for a training compile, numbered where there are others; short,
    so that rows stay narrow."""
    codes = list({id(k.artifact): k.artifact for k in view.frame.kernels}.values())
    phased = len(codes) == 2 and bool(view.compile.artifacts_named("aot_backward_graph"))
    names = (
        ["forward code", "backward code"]
        if phased
        else [f"output code {i + 1}" for i in range(len(codes))]
        if len(codes) > 1
        else ["output code"]
    )
    short = {id(a): n for a, n in zip(codes, names, strict=True)}
    short.update({id(a): f"{short[id(a)]} [{a.subgraph}]" for a in codes if a.subgraph})
    return short


def _unknown_nodes_note(view: FrameView) -> list[Block]:
    """Where generated kernels logged no graph nodes: why the column is empty, and how a
    capture fills it."""
    unknown = sum(
        1
        for k in view.frame.kernels
        if k.kernel.kind != "extern" and k.numbers_of is None and not graph_nodes_of(view.frame, k)
    )
    if not unknown:
        return []
    version = torch_version(view.frame.rank)  # the log's own, never ours
    return [
        Paragraph(
            [
                f"The graph nodes of {unknown} generated "
                f"kernel{'s' if unknown > 1 else ''} were not logged: "
                "Inductor names them in a ",
                Code("Source Nodes"),
                " comment for some kernels only, and this log"
                + (f" (torch {version})" if version else "")
                + f" has none for {'these' if unknown > 1 else 'this one'}. Captured with ",
                Code("torch._inductor.config.trace.provenance_tracking_level = 1"),
                ", a compile logs which nodes each kernel computes, and this table shows them.",
            ]
        )
    ]


def _kernel_rows(
    frame: FramePlan, k: KernelPlan, code_name: str, noted: bool = True
) -> list[list[Inlines]]:
    """One row per kernel, an extern (library) kernel one row with its calls counted.
    ``code_name`` names the output code it is in; ``noted``: a kernel shown on an earlier
    compile's page says so in its row."""
    code: Inline = code_link(k, code_name) if k.code is not None else code_name
    kernel = k.kernel
    name: Inlines = [place_link(k.docname, k.anchor, kernel.name)]
    if k.numbers_of is not None:  # no page: the earlier compile's kernel's page
        but = "" if k.numbers_of.kernel.source == kernel.source else " but for numbers"
        base = k.numbers_of
        name = [place_link(base.docname, base.anchor, kernel.name)]
        name += [f" (as {k.numbers_of_label}'s{but})"] if noted else []
    if kernel.kind != "extern":
        nodes = ", ".join(graph_nodes_of(frame, k))
        return [
            [
                name,
                [kernel.kind.replace("_", " ")],
                [code],
                [Code(truncate(nodes, SOURCE_NODES_LIMIT))] if nodes else [],
            ]
        ]
    # a library (extern) kernel: one row however often the code calls it, its calls counted
    calls = kernel.calls  # a repeated subgraph's line counted once per call of it
    sites = len(kernel.launch_lines)
    lines = ", ".join(str(n) for n in kernel.launch_lines[:EXTERN_LINES])
    more = f" and {sites - EXTERN_LINES} more" if sites > EXTERN_LINES else ""
    where: Inlines = [code, f" line{'s' if sites > 1 else ''} {lines}{more}"] if sites else [code]
    nodes = ", ".join(dict.fromkeys(n for call in kernel.call_nodes for n in call))
    nodes = nodes or ", ".join(kernel.source_nodes)
    kind = f"extern, {calls} calls" if calls > 1 else "extern"
    return [[name, [kind], where, [Code(truncate(nodes, SOURCE_NODES_LIMIT))] if nodes else []]]
