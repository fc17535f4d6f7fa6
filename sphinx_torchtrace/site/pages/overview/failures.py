"""Failures and graph breaks, grouped by what torch logged for them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ....trace import RankTrace
from ....trace.analyses import graph_breaks
from ....trace.analyses.break_registry import BreakRegistry
from ....trace.analyses.failures import failure_groups
from ...blocks import (
    Block,
    BulletList,
    Code,
    CodeBlock,
    Dropdown,
    Emphasis,
    Inline,
    Link,
    ObjectTarget,
    Paragraph,
    Section,
    Strong,
    Table,
    joined,
    linked,
)
from ...count_words import counts_text
from ...naming import break_object_name
from ...outcome_words import OUTCOME_WORDS
from ...source import maybe_strip
from ...words import _
from .view import CELL_COMPILES, Overview, Row, counted


def section(view: Overview) -> list[Block]:
    intro = Paragraph(
        [
            "A ",
            Emphasis("graph break"),
            " is a spot where PyTorch cannot capture the code into its graph: it compiles the "
            "part before, runs the offending code as ordinary Python, then compiles what "
            "follows, which costs speed. A ",
            Emphasis("restart"),
            " is PyTorch starting the analysis of a function over (usually right after a graph "
            "break), and a ",
            Emphasis("compile error"),
            " leaves the function uncompiled. Identical reasons are grouped; the count says how "
            "often each occurred.",
        ]
    )
    bodies = view.for_ranks(view.trace.ranks, lambda r: _failures_of(view, r))
    return [Section([_("Failures and restarts")], [intro, *bodies], anchor="failures-and-restarts")]


def _failures_of(view: Overview, rank: RankTrace) -> list[Block]:
    groups = failure_groups(rank.compiles)
    if not groups:
        return [Paragraph(["No graph breaks, restarts or compile errors."])]
    counts = graph_breaks.break_counts(groups)
    rows: list[Row] = [
        [_category_cell(g), _failure_reason(g), [str(g.count)], _failure_places(view, g)]
        for g in groups
    ]
    table = Table(
        [_("Kind"), _("Reason"), _("Count"), _("Compile ids and places")],
        rows,
        widths=[2, 6, 1, 3],
        classes=["torchtrace-failures"],
    )
    return [Paragraph([_break_counts_text(counts) + "."]), table, *_distinct_breaks(view, groups)]


def _distinct_breaks(view: Overview, groups: Sequence[graph_breaks.EventGroup]) -> list[Block]:
    """Each distinct graph break as structure: its type and registry id (a ``torchtrace``
    object, ``run/GB0025``, declared where the trace first shows it), how often and where,
    the explanation, the hints as a list, what torch chained after it, and its debug context
    folded."""
    items: list[list[Block]] = []
    kinds: dict[str, list[graph_breaks.EventGroup]] = {}
    for g in groups:
        if g.category == "graph_break":
            kinds.setdefault(g.message.first_part.key, []).append(g)
    for rows in kinds.values():
        g = rows[0]
        first = g.message.first_part
        entry: list[Block] = []
        name = break_object_name(view.plan.label, first.key)
        if name not in view.declared:
            view.declared.add(name)
            entry.append(ObjectTarget("gb", name, f"{first.type} ({view.plan.label})"))
        head: list[Inline] = [Strong(first.type)]
        if first.registry_id:
            head += [" (", _registry_link(first), ")"]
        head.append(f": {counted(sum(r.count for r in rows), 'time')}")
        for row in rows:  # each place of this kind, with its compiles
            head.append(f"; {row.count} at " if len(rows) > 1 else " at ")
            place = row.location or "a place torch did not name"
            head += [Code(maybe_strip(place, view.settings.no_source)) if row.location else place]
            head += [" in ", *view.links(row.compiles)]
        entry.append(Paragraph(head))
        if first.explanation:
            entry.append(Paragraph(["Why: ", *linked(first.explanation)]))
        hints = [h for h in first.hints if not h.lower().startswith("please report")]
        entry.extend(_registry_blocks(view.settings.break_registry, first))
        if hints:
            entry.append(BulletList([[Paragraph(["Hint: ", *linked(h)])] for h in hints]))
        for chained in g.message.parts[1:]:  # caused by the first: never a cause of its own
            then: list[Inline] = ["Then, while handling it: ", Strong(chained.type)]
            if chained.registry_id:
                then += [" (", _registry_link(chained), ")"]
            entry.append(Paragraph(then))
        if first.context:
            entry.append(
                Dropdown(
                    [_("Developer debug context")],
                    [CodeBlock(maybe_strip(first.context, view.settings.no_source), "text")],
                )
            )
        items.append(entry)
    errors = _distinct_errors(view, groups)
    if not items:
        return errors
    intro = Paragraph(
        [
            Strong("Distinct graph breaks"),
            ": each kind once, with what PyTorch says of it and how to avoid it. Each is a ",
            Code("gb"),
            " object of the documentation, named after the trace and its registry id (",
            Code(break_object_name(view.plan.label, "GB0025")),
            "; ",
            Code("gb/<type>--h<digest>"),
            " without one), which your pages can link with the gb role.",
        ]
    )
    return [intro, BulletList(items), *errors]


#: What each category of event is called, for readers who do not work on PyTorch.
CATEGORY_WORDS: dict[graph_breaks.Category, str] = {
    "error": "Compile error",
    "graph_break": "Graph break",
    "restart": "Restart (no graph break)",
}

#: Characters of an error's message the overview folds (its frame page shows it whole).
ERROR_MESSAGE_CHARS = 20_000


def _distinct_errors(view: Overview, groups: Sequence[graph_breaks.EventGroup]) -> list[Block]:
    """Each distinct compile error (exception type, what torch said, user frame): how
    often, where, and the whole message with its traceback folded."""
    items: list[list[Block]] = []
    for g in groups:
        if g.category != "error":
            continue
        head: list[Inline] = [
            Strong(g.type or "Compile error"),
            ": ",
            *linked(g.message.headline),
            f" ({counted(g.count, 'time')}",
        ]
        if g.location:
            head += [" at ", Code(maybe_strip(g.location, view.settings.no_source))]
        in_torch = g.events[0].torch_location if g.events else None
        if in_torch:
            shown = maybe_strip(in_torch, view.settings.no_source)
            head += [", raised in library code at ", Code(shown)]
        head += ") in ", *view.links(g.compiles)
        if g.outcome is not None:
            head.append(
                f"; {OUTCOME_WORDS[g.outcome]} (each compile's page says which record shows it)"
            )
        entry: list[Block] = [Paragraph(head)]
        text = g.message.text.strip()
        if text and text != g.message.headline:
            cut = text[:ERROR_MESSAGE_CHARS]  # the frame page has it whole
            note = f"\n... ({len(text) - len(cut)} more characters)" if len(text) > len(cut) else ""
            entry.append(
                Dropdown(
                    [_("The message, with its traceback")],
                    [CodeBlock(maybe_strip(cut, view.settings.no_source) + note, "text")],
                )
            )
        items.append(entry)
    if not items:
        return []
    return [
        Paragraph(
            [
                Strong("Distinct compile errors"),
                ": each once, by exception type, message and user frame.",
            ]
        ),
        BulletList(items),
    ]


def _break_counts_text(counts: graph_breaks.BreakCounts) -> str:
    """``3 graph breaks (2 kinds, 3 places); 1 compile error``: the glance and the table
    alike."""
    parts = []
    if counts.graph_breaks:
        parts.append(
            counts_text(
                counts.graph_breaks,
                "graph break",
                counts.break_types,
                counts.break_places,
                counts.break_unplaced,
            )
        )
    if counts.errors:
        parts.append(
            counts_text(
                counts.errors,
                "compile error",
                counts.error_types,
                counts.error_places,
                counts.error_unplaced,
            )
        )
    if counts.restarts:
        n = counts.restarts
        parts.append(f"{n} restart{'s' if n > 1 else ''} with no graph break")
    return "; ".join(parts) or "none"


def _category_cell(group: graph_breaks.EventGroup) -> list[Inline]:
    """The "Kind" column: the event's category, its type, what followed."""
    kind: list[Inline] = [CATEGORY_WORDS.get(group.category, group.category)]
    if group.type:
        kind += [": ", Code(group.type)]
    if group.outcome is not None:  # what followed, as the log records it
        kind.append(f"; {OUTCOME_WORDS[group.outcome]}")
    return kind


def _failure_reason(group: graph_breaks.EventGroup) -> list[Inline]:
    """The break's type and registry id, what torch chained after it ("then: ..."), the
    explanation and hints of the first part, as sentences of one cell."""
    message = group.message
    parts = message.parts
    reason: list[Inline] = [Strong(parts[0].type if parts else message.headline)]
    if parts and parts[0].registry_id:
        reason += [" (", _registry_link(parts[0]), ")"]
    for chained in parts[1:]:  # caused by the first: never a cause of its own
        reason += [" Then: ", Strong(chained.type)]
        if chained.registry_id:
            reason += [" (", _registry_link(chained), ")"]
    first = parts[0] if parts else None
    if first is not None and first.explanation and group.category == "error":
        reason += [" ", *linked(first.explanation)]  # a break's are listed below the table
    return reason


def _registry_blocks(registry: BreakRegistry | None, part: graph_breaks.BreakPart) -> list[Block]:
    """What the installed torch's graph-break registry says beyond the log: today's name of
    the break where it changed, and the hints the log's message did not give (templates
    with ``{placeholders}`` are left out: the log's concrete hints say them)."""
    variants = registry.get(part.registry_id) if registry is not None else ()
    if not variants:
        return []
    out: list[Block] = []
    names = [v.type for v in variants if v.type != part.type]
    if names and len(variants) == 1:
        out.append(Paragraph(["The installed PyTorch calls it ", Strong(names[0]), "."]))
    logged = set(part.hints)
    extra = [
        h
        for v in variants
        for h in v.hints
        if h not in logged and "{" not in h and not h.lower().startswith("please report")
    ]
    if extra:
        out.append(
            BulletList(
                [
                    [Paragraph(["Hint (PyTorch's registry): ", *linked(h)])]
                    for h in dict.fromkeys(extra)
                ]
            )
        )
    return out


def _registry_link(part: graph_breaks.BreakPart) -> Inline:
    if part.url:
        return Link(part.url, part.registry_id or part.url)
    return Code(part.registry_id or "")


def _failure_places(view: Overview, group: graph_breaks.EventGroup) -> list[Inline]:
    """The compiles of the row, ``×k`` where one had the break k times: the count adds up."""
    times = Counter(id(e.compile) for e in group.events)
    compiles = group.compiles
    cells = [
        [view.link(c), *([f" ×{times[id(c)]}"] if times[id(c)] > 1 else [])]
        for c in compiles[:CELL_COMPILES]
    ]
    places = joined(cells)
    rest = sum(times[id(c)] for c in compiles[CELL_COMPILES:])
    if rest:
        places.append(f" and {rest} more")
    if group.location:
        places += ["; at ", Code(group.location)]
    return places
