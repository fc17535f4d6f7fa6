"""Why it compiled again: what made the compile before unusable, the guards that failed,
and how the Dynamo graph changed."""

from __future__ import annotations

from ....trace import Compile
from ....trace.analyses import compare
from ....trace.analyses.caches import lookups
from ....trace.analyses.guards import guard_kind
from ....trace.analyses.recompiles import Recompile, recompile_of
from ...blocks import (
    Block,
    BulletList,
    Code,
    CodeBlock,
    Download,
    Inline,
    PageLink,
    Paragraph,
    Section,
    WebOnly,
    place_link,
)
from ...words import _
from ..diffs import folded_diff, sizes_diff, sizes_only_blocks
from .view import FrameView


def section(view: FrameView) -> Section | None:
    """Why this compile happened again: the compile before it, the cached entries Dynamo
    tried, and how the Dynamo graph changed."""
    c, previous = view.compile, view.previous
    if previous is None and not compare.logged_reasons(c):
        return None
    blocks: list[Block] = []
    if previous is not None:
        blocks += _previous_blocks(view, previous)
    blocks += _entries_blocks(view)
    if previous is not None:
        blocks += _diff_blocks(view, previous)
    refused = compare.is_refused(c)
    title = _("Why it was asked for a new version") if refused else _("Why it compiled again")
    return Section([title], blocks, anchor="changed")


def _entries_blocks(view: FrameView) -> list[Block]:
    """Every cached entry Dynamo tried and the guard that failed for each, where there are
    several or the compile before names none."""
    c, previous = view.compile, view.previous
    entries = compare.recompile_reason_entries(c)
    unnamed = previous is None or compare.failed_guard(c, previous) is None
    if not (len(entries) > 1 or (entries and unnamed)):
        return []
    intro = Paragraph(
        [
            "Dynamo tried every cached entry of this frame, most recent first, "
            + (
                "and none fit: for each, the guard that failed, or the value of a "
                "guard torch could not read (no check failed there)"
                if any(guard_kind(r) == "guard_raised" for _, r in entries)
                else "and each had a failing guard"
            ),
            _reasons_record(c),
            ":",
        ]
    )
    items: list[list[Block]] = []
    for entry, reason in entries:
        # the entry as the compile it names (after a reset, ``[0/2] #2``, not ``[0/2]``)
        named = compare.entry_compile(view.frame.rank, c, entry) if entry else None
        prefix: list[Inline] = (
            [view.frame_link(named), ": "]
            if named is not None
            else [f"[{entry}]: "]
            if entry
            else []
        )
        items.append([Paragraph([*prefix, Code(view.strip(reason.split("\n")[0]))])])
    return [intro, BulletList(items)]


def _reasons_record(compile_: Compile) -> str:
    """`` (recompile_reasons, line 3210 of the log)``: the record the guards are read from
    (a ``RecompileError``'s own ``fail_reason`` lists them where torch raised it instead)."""
    found = compare.reasons_record(compile_)
    return f" ({found[0]}, line {found[1]} of the log)" if found else ""


def _previous_blocks(view: FrameView, previous: Compile) -> list[Block]:
    """What made the compile before this one unusable: a cache reset or a failed guard."""
    if view.compile.id.frame_compile_id == 0:
        return _reset_blocks(view.frame_link(previous))
    found = recompile_of(view.frame.rank, view.compile)
    guard, before = _failed_guard(view, previous, found)
    if guard:
        return _guard_blocks(view, previous, found, guard, before)
    return _no_guard_blocks(view, previous, before)


def _reset_blocks(before: Inline) -> list[Block]:
    """The same compile id logged again: compiles are numbered afresh after a reset."""
    return [
        Paragraph(
            [
                "The same compile id as ",
                before,
                ", logged again: torch numbers compiles from the start again only after "
                "its caches are reset (",
                Code("torch._dynamo.reset()"),
                "), so this is a fresh compile of the frame. The log has no record of the "
                "reset itself.",
            ]
        )
    ]


def _failed_guard(
    view: FrameView, previous: Compile, found: Recompile
) -> tuple[str | None, Inline]:
    """The guard that failed, and the compile it guarded: ``previous``, or the version the
    recompile's headline names (the latest in the same grad mode and autocast state)."""
    first = found.headline
    guard = compare.failed_guard(view.compile, previous)
    if first is not None and first.previous is not None and first.kind != "other":
        guard = compare.failed_guard(view.compile, first.previous) or guard
        if guard and first.previous is not previous:
            return guard, view.frame_link(first.previous)
    return guard, view.frame_link(previous)


def _guard_blocks(
    view: FrameView, previous: Compile, found: Recompile, guard: str, before: Inline
) -> list[Block]:
    """The guard of ``before`` that failed, as torch words it (or the error raised while
    reading the value it checks)."""
    first = found.headline
    if first is not None and first.kind == "guard_raised":
        return [
            Paragraph(
                [
                    "Checking the guards of ",
                    before,
                    " raised an error while reading the value a guard checks, so no check "
                    "failed; torch's words",
                    _reasons_record(view.compile),
                    ":",
                ]
            ),
            CodeBlock(view.strip(guard), "text"),
        ]
    context = (
        [" (the latest version compiled in the same grad mode and autocast state)"]
        if first is not None and first.previous is not previous
        else []
    )
    return [
        Paragraph(
            [
                "The code compiled for ",
                before,
                *context,
                " did not fit the new inputs; the guard that failed",
                _reasons_record(view.compile),
                ":",
            ]
        ),
        CodeBlock(view.strip(guard), "text"),
        *_same_graph_blocks(found),
    ]


def _no_guard_blocks(view: FrameView, previous: Compile, before: Inline) -> list[Block]:
    """No guard of ``previous`` failed: the reasons are other versions', ``previous``
    failed and left no code, or the log records no reason at all."""
    if compare.logged_reasons(view.compile):  # reasons, none about ``previous``: say so
        return [
            Paragraph(
                [
                    "Compiled after ",
                    before,
                    "; the guards torch records as failed",
                    _reasons_record(view.compile),
                    " are those of other cached versions, listed below.",
                ]
            )
        ]
    if not compare.left_code(previous):
        record = next((m for m in previous.compilation_metrics if m.fail_type), None)
        shown = (
            (
                f" (its compilation_metrics, line {record.line} of the log: fail_type "
                f"{record.fail_type})"
            )
            if record is not None
            else ""
        )
        return [
            Paragraph(
                [
                    "Compiled again after ",
                    before,
                    f", which failed{shown} and left no "
                    "compiled code (so no guard of it failed). The log records no reason for "
                    "this compile.",
                ]
            )
        ]
    return [
        Paragraph(
            [
                "Compiled after ",
                before,
                ". The log records no reason for this recompile "
                "(no recompile reasons, no failed guard).",
            ]
        )
    ]


def _same_graph_blocks(found: Recompile) -> list[Block]:
    """A recompile that made the same graph again, every cache lookup a hit: said as such."""
    first = found.headline
    if not found.same_graph_cached or first is None or first.previous is None:
        return []
    hits = ", ".join(f"{e.cache} hit" for e in lookups(found.compile))  # loads carried apart
    return [
        Paragraph(
            [
                f"This recompile made the same Dynamo graph as {first.previous.label}, and "
                f"every cache lookup hit ({hits}): the new version differs from it only in "
                "its guards."
            ]
        )
    ]


def _diff_blocks(view: FrameView, previous: Compile) -> list[Block]:
    """How the Dynamo graph changed since the previous compile, or why no diff is shown."""
    c = view.compile
    sizes = _sizes_only_blocks(view, previous)
    if sizes:
        return sizes
    diff = compare.graph_diff(previous, c)
    if diff:
        intro: list[Inline] = [
            "How the Dynamo graph changed (lines starting with ",
            Code("-"),
            f" are {previous.label}'s, with ",
            Code("+"),
            " this compile's):",
        ]
        return [Paragraph(intro), *folded_diff(view.strip(diff))]
    mine, theirs = compare.graph_text(c), compare.graph_text(previous)
    if mine is None and theirs is None:
        return []
    if mine is None:
        text = "This compile logged no Dynamo graph to compare."
    elif theirs is None:
        text = f"{previous.label} logged no Dynamo graph to compare with."
    else:
        text = (
            f"The Dynamo graph is the same as {previous.label}'s: what changed is in the "
            "guards, or after Dynamo."
        )
    return [Paragraph([text])]


def _sizes_only_blocks(view: FrameView, previous: Compile) -> list[Block]:
    """The Dynamo graph of a recompile for new input shapes: which inputs changed, not the
    hundreds of lines that carry the new sizes through the graph."""
    mine, theirs = compare.graph_text(view.compile), compare.graph_text(previous)
    if mine is None or theirs is None:
        return []
    new = view.strip(mine).rstrip("\n").split("\n")
    old = view.strip(theirs).rstrip("\n").split("\n")
    changed = compare.sizes_only_changes(old, new)
    if not changed:
        return []
    name = compare.DIFF_ARTIFACT
    diff, unshown = sizes_diff(old, new, f"{previous.label} {name}", f"{view.compile.label} {name}")
    graph = next((g for g in view.frame.graphs if g.artifact.name == name), None)
    if graph is not None and graph.same_as is not None:
        graph = graph.same_as  # an identical earlier graph of the frame shows it
    whole: list[Inline] = []
    if graph is not None and graph.has_page:
        whole = ["The whole graph is on ", PageLink(graph.docname, "its page"), "."]
    elif graph is not None and graph.inline and graph.docname == view.frame.docname:
        whole = ["The whole graph is ", view.anchor_link(graph.anchor, "below"), "."]
    elif graph is not None and graph.inline:  # alike on an earlier rank: shown on its page
        whole = [
            "The whole graph is on ",
            place_link(graph.docname, graph.anchor, "an earlier rank's page"),
            ".",
        ]
    elif graph is not None and graph.raw_path:
        whole = [
            WebOnly(
                ["The whole graph is a ", Download(graph.raw_path, "download"), "."],
                [f"The whole graph is in the log, at line {graph.artifact.line}."],
            )
        ]
    return sizes_only_blocks(
        ["How the Dynamo graph changed: the same graph as ", view.frame_link(previous), "'s"],
        changed,
        len(new),
        diff,
        unshown,
        whole,
    )
