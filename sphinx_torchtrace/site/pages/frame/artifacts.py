"""Every artifact of the compile in pipeline order, and where each is shown."""

from __future__ import annotations

import json

from ....trace import Artifact, Compile
from ....trace.analyses import compare
from ...artifacts import GUARD_ARTIFACTS, INLINE_LIMIT, language_of, pipeline_position, size_text
from ...blocks import (
    AnchorLink,
    Block,
    Code,
    CodeBlock,
    Download,
    Dropdown,
    Inline,
    Inlines,
    ObjectLink,
    ObjectTarget,
    PageLink,
    Paragraph,
    Section,
    Strong,
    Table,
    WebOnly,
    place_link,
)
from ...naming import shown_name
from ...plan import GraphPlan
from ...words import _
from ..diffs import sizes_diff, sizes_only_blocks, whole_text
from ..graph import inline_graph
from .failures import break_of, failures_title
from .folds import drop_empty_columns, folded_if_long, folded_if_many
from .view import FrameView, artifact_anchor

#: Artifacts named after their phase only when a forward and a backward of that name exist.
NOT_PHASED = frozenset(
    {"aot_joint_graph", "aot_forward_graph", "aot_backward_graph", "dynamo_output_graph"}
)

ARTIFACTS_TEXT = (
    "In pipeline order: Dynamo's graph, AOT Autograd's graphs, Inductor's graphs before and "
    "after its passes, then the generated code. Each name links to where it is shown: folded "
    "below the table, or, for a large graph, on a page of its own; an artifact too large to "
    "show is offered raw."
)


def section(view: FrameView) -> Section | None:
    """The artifacts as a table in pipeline order, then the small ones shown, folded."""
    c = view.compile
    if not c.artifacts:
        return None
    ordered = [
        a for _, _, a in sorted((pipeline_position(a), i, a) for i, a in enumerate(c.artifacts))
    ]
    rows: list[list[Inlines]] = []
    inline: list[Artifact] = []
    for a in ordered:
        name_cell, content_cell, shown_below = _artifact_cells(view, a)
        if shown_below:
            inline.append(a)
        kernels = [k for k in view.frame.kernels if k.artifact is a]
        rows.append(
            [
                name_cell,
                [size_text(a.size)],
                [str(a.node_count)] if a.node_count is not None else [],
                [str(len(kernels))] if kernels else [],
                content_cell,
            ]
        )
    header, rows, widths = drop_empty_columns(
        ["Artifact", "Size", "Nodes", "Kernels", "Content"], rows, [6, 2, 1, 1, 2]
    )
    table = folded_if_long(Table(header, rows, widths), "artifacts")
    blocks: list[Block] = [Paragraph([ARTIFACTS_TEXT]), *_cache_note(c), table]
    for g in view.frame.graphs:
        if g.numbers_of is not None and g.artifact in c.artifacts:
            blocks.extend(_numbers_only_blocks(view, g))
    shown: list[Block] = []
    for a in ordered:  # small graphs and other artifacts, folded, in pipeline order
        graph = view.frame.graph_for(a)
        if graph is not None and graph.inline:
            shown.append(inline_graph(view.plan, view.frame, graph, view.settings))
        elif a in inline:
            shown.append(
                Dropdown(
                    [f"{a.name} ({size_text(a.size)}, line {a.line} of the log)"],
                    [*_own_fields(a), CodeBlock(view.strip(a.text()), language_of(a))],
                    anchor=artifact_anchor(a),
                )
            )
    blocks += folded_if_many(shown, "artifacts shown on this page")
    return Section([_("Artifacts")], blocks, anchor="artifacts")


#: Characters of an unknown record kind's own fields shown.
FIELDS_LIMIT = 2000

#: Caches whose hit skips the compile steps that log graphs, as a reader knows them.
CACHES_SKIPPING_GRAPHS = {"fx_graph": "the FX graph cache", "aotautograd": "the AOT autograd cache"}


def _cache_note(c: Compile) -> list[Block]:
    """Why graphs are missing from a compile that a warm cache served: a hit skips the
    steps that log them (Inductor's pre-grad and joint graphs, and more)."""
    hits = [
        CACHES_SKIPPING_GRAPHS[cache]
        for cache in dict.fromkeys(ev.cache for ev in c.cache_events if ev.result == "hit")
        if cache in CACHES_SKIPPING_GRAPHS
    ]
    if not hits:
        return []
    text = "graphs not logged: compiled from " + " and ".join(f"{h} (hit)" for h in hits)
    return [
        Paragraph(
            [
                Strong("Some " + text),
                ". A warm cache skips the steps that log them; for a complete report, capture "
                "with ",
                Code("TORCHINDUCTOR_FORCE_DISABLE_CACHES=1"),
                ".",
            ]
        )
    ]


def _numbers_only_blocks(view: FrameView, graph: GraphPlan) -> list[Block]:
    """A graph that equals an earlier compile's but for its numbers: its object, and its
    first changes folded (the whole text a download), in place of a page of its own."""
    base = graph.numbers_of
    assert base is not None
    new = view.strip(graph.artifact.text()).split("\n")
    old = view.strip(base.artifact.text()).split("\n")
    changed = compare.sizes_only_changes(old, new)
    if changed is None:  # :no-source: cut the two texts differently
        changed = sum(1 for x, y in zip(old, new, strict=False) if x != y)
        old = old[: len(new)] + [""] * (len(new) - len(old))
    short = shown_name(graph.name[len(view.frame.name) + 1 :])
    base_label = graph.numbers_of_label
    target = ObjectTarget("graph", graph.name)
    if not changed:  # the very same text
        title = f"{_graph_title(view, graph)}: as {base_label}'s (the same text)"
        same: list[Inline] = [
            "The same text as ",
            place_link(base.docname, base.anchor, f"{base_label}'s"),
            WebOnly(["; ", Download(graph.raw_path, "this one's"), " is a download"]),
            ".",
        ]
        return [
            target,
            Dropdown([title], [Paragraph(same)], anchor=artifact_anchor(graph.artifact)),
        ]
    diff, unshown = sizes_diff(old, new, f"{base_label} {short}", f"{view.compile.label} {short}")
    title = (
        f"{_graph_title(view, graph)}: as {base_label}'s but for its numbers "
        f"({changed} of {len(new)} lines differ)"
    )
    what = "guards" if graph.artifact.name in GUARD_ARTIFACTS else "graph"
    body = sizes_only_blocks(
        [f"The same {what} as ", place_link(base.docname, base.anchor, f"{base_label}'s")],
        changed,
        len(new),
        diff,
        unshown,
        whole_text(graph.raw_path, graph.artifact.line),
    )
    return [target, Dropdown([title], body, anchor=artifact_anchor(graph.artifact))]


def _fields_text(a: Artifact) -> str:
    """The envelope fields of a record kind this model does not know (a newer torch's), as
    logged: kept as data, not dropped; "" for a known kind or one with none."""
    if a.known or not a.metadata:
        return ""
    text = json.dumps(a.metadata, sort_keys=True, default=str)
    return text if len(text) <= FIELDS_LIMIT else text[: FIELDS_LIMIT - 1] + "…"


def _own_fields(a: Artifact) -> list[Block]:
    fields = _fields_text(a)
    return [Paragraph(["The record's own fields: ", Code(fields)])] if fields else []


def _artifact_cells(view: FrameView, a: Artifact) -> tuple[Inlines, Inlines, bool]:
    """The name cell (a link where the artifact is shown), where its content is, and
    whether this page shows it below the table."""
    graph = view.frame.graph_for(a)
    if graph is not None and graph.numbers_of is not None:  # no page: shown below the table
        link = view.anchor_link(artifact_anchor(a), _graph_title(view, graph))
        base = graph.numbers_of
        as_base = place_link(base.docname, base.anchor, f"{graph.numbers_of_label}'s")
        but = "; " if graph.numbers_same else " but for numbers; "
        printed: Inlines = [] if graph.numbers_same else [" but for numbers"]
        return [link], ["as ", as_base, WebOnly([but, _raw_download(graph)], printed)], False
    if graph is not None and graph.same_as is not None and graph.same_label:  # another rank's
        same = graph.same_as
        there: Inlines = ["as ", place_link(same.docname, same.anchor, f"{graph.same_label}'s")]
        return [place_link(same.docname, same.anchor, _graph_title(view, graph))], there, False
    if graph is not None and graph.same_as is not None:  # identical: no page of its own
        same = graph.same_as
        what = f"unchanged by {graph.unchanged_by}: " if graph.unchanged_by else "as "
        cell: Inlines = [what, place_link(same.docname, same.anchor, _graph_title(view, same))]
        return [place_link(same.docname, same.anchor, _graph_title(view, graph))], cell, False
    if graph is not None and graph.inline:  # small: shown below the table
        where: Inlines = (
            ["below"] if not graph.raw_path else ["below", WebOnly([", ", _raw_download(graph)])]
        )
        return [view.anchor_link(graph.anchor, _graph_title(view, graph))], where, False
    if graph is not None:
        return (
            [PageLink(graph.docname, _graph_title(view, graph))],
            [WebOnly([_raw_download(graph)], ["on its page"])],
            False,
        )
    if a.payload is None:
        fields = _fields_text(a)
        return [Code(a.name)], [Code(fields)] if fields else ["no content"], False
    link = view.anchor_link(artifact_anchor(a), a.name)
    if (a.name == "dynamo_error" and view.compile.failures) or break_of(view.compile, a):
        # the failures section shows it, anchored: an error's traceback, a break's message
        return [link], [f"under {failures_title(view.compile)}"], False
    copy = view.plan.first_copy(a)
    if copy is not None:  # the same text as on an earlier compile's page: linked there
        other_frame, other = copy
        shown = AnchorLink(other_frame.docname, artifact_anchor(other), a.name)
        return [shown], ["as ", ObjectLink("frame", other_frame.name), "'s"], False
    if a.size <= INLINE_LIMIT:
        return [link], ["below"], True
    raw = view.frame.download_for(a)
    if raw is not None:
        return (
            [Code(a.name)],
            [
                WebOnly(
                    [Download(raw.raw_path, "raw")],  # too large to show
                    [f"too large to show: line {a.line} of the log"],
                )
            ],
            False,
        )
    return [Code(a.name)], ["too large to show"], False


def _graph_title(view: FrameView, graph: GraphPlan) -> str:
    """A graph's name on this frame; ``(forward)``/``(backward)`` where both were logged."""
    a, c = graph.artifact, view.compile
    same_name = c.artifacts_named(a.name)
    has_backward = bool(c.artifacts_named("aot_backward_graph"))
    if has_backward and len(same_name) == 2 and a.name not in NOT_PHASED:
        title = f"{a.name} ({'forward' if a is same_name[0] else 'backward'})"
    else:
        title = shown_name(graph.name[len(view.frame.name) + 1 :])
    return f"{title} [{a.subgraph}]" if a.subgraph is not None else title  # regional Inductor


def _raw_download(graph: GraphPlan) -> Download:
    """A graph's raw text as a download; a runnable graph's named so."""
    label = "runnable .py" if graph.artifact.name == "fx_graph_runnable" else "raw"
    return Download(graph.raw_path, label)
