"""Ranks: which logged alike, what set each class apart, and where they diverge."""

from __future__ import annotations

from collections.abc import Sequence

from ....trace import STATUS_LEGEND, volatile
from ....trace.analyses.divergence import Divergence, FunctionSplit, MissingIds, StatusSplit
from ....trace.analyses.divergence import divergence as rank_divergence
from ....trace.analyses.glance import RankRow, rank_rows
from ....trace.analyses.naming import rank_number
from ....trace.analyses.rank_digest import number_ranges
from ....trace.analyses.rank_groups import RankGroup
from ...blocks import (
    Admonition,
    Block,
    BulletList,
    Code,
    Dropdown,
    Inline,
    ObjectLink,
    Paragraph,
    Section,
    Strong,
    Table,
    item,
    joined,
)
from ...divergence_words import DIVERGENCE_WORDS
from ...plan import RankPlan
from ...rank_group_words import rank_group_words
from ...rank_sharing import SET_ASIDE, VALUES_SHOWN
from ...words import _
from .view import Overview, Row, log_size_text, ranks_text, seconds_text


def section(view: Overview) -> list[Block]:
    if not view.multi:
        return []
    intro = Paragraph(
        [
            "This trace holds one log per process (rank) of a distributed job. Ranks usually "
            "compile the same code in the same way; a difference between them often explains a "
            "hang (ranks running different graphs, so their collectives never meet) or one slow "
            "rank (cache misses)."
        ]
    )
    header = [
        "Rank",
        "Log",
        "Size",
        "Compile ids",
        "Statuses",
        "Compile time",
        "Chromium events",
    ]
    rows = [_rank_row(row) for row in rank_rows(view.trace)]
    table: Block = Table(header, rows, widths=[1, 4, 1, 1, 2, 1, 1])
    if len(rows) > RANK_ROWS_SHOWN:  # a thousand ranks: their classes come first
        table = Dropdown([f"Every rank ({len(rows)})"], [table])
    blocks: list[Block] = [
        intro,
        *_rank_classes(view),
        table,
        *_repeating_ranks(view),
        divergence(view),
    ]
    return [Section([_("Ranks")], blocks, anchor="ranks")]


#: Ranks the overview's table lists unfolded; more are folded (their classes come first).
RANK_ROWS_SHOWN = 32


def _rank_classes(view: Overview) -> list[Block]:
    """Ranks that logged alike, as classes, first: one line for hundreds of alike ranks, and
    for a class that differs from the first rank, the compiles it differs in (linked to
    its own pages; its other compiles are shown on the earlier rank's pages)."""
    plan = view.plan
    classes: dict[int, list[RankPlan]] = {}
    for r in plan.ranks:
        classes.setdefault(id(r.same_as or r), []).append(r)
    if len(classes) == len(plan.ranks) and not any(f.same_as for f in plan.frames):
        return []  # nothing alike: the table says it all
    first_rank = plan.ranks[0]
    items: list[list[Block]] = []
    for members in classes.values():
        numbers = [rank_number(view.trace, r.rank) for r in members]
        word = "rank" if len(numbers) == 1 else "ranks"
        head: list[Inline] = [Strong(f"{word} {number_ranges(numbers)}")]
        if len(numbers) > 1:
            head.append(f" ({len(numbers)} ranks, alike)")
        own = plan.own_frames(members[0])
        if members[0] is first_rank:
            head.append(": the first rank; the others are compared with it")
        elif not own:
            head.append(f": as {_shown_ranks(view, members[0])} (every compile on their pages)")
        else:
            # the records outside any compilation are no compile: named apart, not counted
            compiles = [f for f in own if not f.compile.id.is_unknown]
            parts: list[list[Inline]] = [
                [ObjectLink("frame", f.name)] for f in compiles[:FRAMES_LISTED]
            ]
            if len(compiles) > FRAMES_LISTED:
                parts.append([f"{len(compiles) - FRAMES_LISTED} more compiles"])
            outside = [f for f in own if f.compile.id.is_unknown]
            if outside:
                parts.append(
                    [ObjectLink("frame", outside[0].name, "its records outside any compilation")]
                )
            head += [": differs in ", *joined(parts, ", ")]
            shared = [
                f
                for f in plan.frames_of(members[0])
                if f.same_as is not None and not f.compile.id.is_unknown
            ]
            if shared:
                head.append(f"; its other compiles as {_shown_ranks(view, members[0])}")
        items.append([*item(*head), *_set_aside(members[0])])
    alike = len(classes) < len(plan.ranks)
    intro = Paragraph(
        [
            f"{len(plan.ranks)} ranks in {len(classes)} "
            f"{'class' if len(classes) == 1 else 'classes'}"
            + (" of ranks that logged alike" if alike else ": no two ranks logged alike")
            + f" (every record compared, the values of metrics and timing events apart; "
            f"{SET_ASIDE}: what was set aside is listed under each class, with an example). "
            "A compile that equals the same compile id of an earlier rank is shown on that "
            "rank's pages; one that differs has pages of its own, which list what differs."
        ]
    )
    return [intro, BulletList(items)]


#: Compiles a rank class lists by name (the rest counted).
FRAMES_LISTED = 12


def _set_aside(first: RankPlan) -> list[Block]:
    """What comparing a class's ranks left out of their records, rule by rule, each with one
    example as the log has it: nothing the rules hide is out of a reader's sight."""
    found = first.set_aside
    if not found:
        return []
    rules = [rule for rule in volatile.RULE_NAMES if rule in found]
    return [BulletList([item(f"Set aside, {rule}: ", Code(found[rule])) for rule in rules])]


def _shown_ranks(view: Overview, rank_plan: RankPlan) -> str:
    """``rank 0``, ``ranks 0, 3``: the ranks whose pages show this rank's shared compiles."""
    shown = {
        id(f.same_as.rank): f.same_as.rank
        for f in view.plan.frames_of(rank_plan)
        if f.same_as is not None
    }
    numbers = [rank_number(view.trace, r) for r in shown.values()]
    return f"{'rank' if len(numbers) == 1 else 'ranks'} {number_ranges(numbers)}"


def _repeating_ranks(view: Overview) -> list[Block]:
    """What ranks logged differently in the compiles they share (metrics and timing events,
    never other records): ranks that differ in the same metrics are one line, and one table
    gives each differing value's spread over the ranks, so a thousand ranks cost what one
    does."""
    repeats = [r for r in view.plan.ranks if r.differences]
    if not repeats:
        return []
    lines: dict[tuple[int | None, tuple[str, ...]], list[int]] = {}
    for r in repeats:
        m = rank_number(view.trace, r.same_as.rank) if r.same_as else None
        lines.setdefault((m, tuple(r.differences)), []).append(rank_number(view.trace, r.rank))
    items: list[list[Block]] = []
    for (m, differences), numbers in lines.items():
        same = f"same as rank {m}; " if m is not None else ""
        verb = "differs" if len(numbers) == 1 else "differ"
        items.append(
            item(Strong(ranks_text(numbers)), f": {same}{verb} in " + ", ".join(differences))
        )
    intro = Paragraph(
        [
            "What ranks logged differently in the compiles they share with an "
            "earlier rank (metrics, mostly times):"
        ]
    )
    return [intro, BulletList(items), _value_spreads(view, repeats)]


def _value_spreads(view: Overview, repeats: Sequence[RankPlan]) -> Block:
    """Each differing value: as the compile's page shows it, and the other ranks' values
    (the lowest and the highest, with their ranks, where they are numbers)."""
    spreads: dict[tuple[str, str, str, str], list[tuple[str, int]]] = {}
    for r in repeats:
        n = rank_number(view.trace, r.rank)
        for v in r.changed_values:
            key = (v.compile, v.record, v.key, v.original)
            if key in spreads or len(spreads) < VALUES_SHOWN:
                spreads.setdefault(key, []).append((v.value, n))
    rows: list[Row] = [
        [[label], [record], [Code(key)], [Code(original)], _spread_cell(values)]
        for (label, record, key, original), values in spreads.items()
    ]
    blocks: list[Block] = [
        Table(
            ["Compile", "Record", "Metric", "On its page", "Other ranks"],
            rows,
            widths=[1, 2, 2, 2, 3],
        )
    ]
    if len(spreads) >= VALUES_SHOWN:
        blocks.append(
            Paragraph(
                [f"The first {VALUES_SHOWN} differing values; the lines above count them all."]
            )
        )
    return Dropdown([f"Values that differ ({len(spreads)})"], blocks)


def _spread_cell(values: Sequence[tuple[str, int]]) -> list[Inline]:
    """``424242 (rank 3)``; ``12.5 (rank 7) to 13.1 (rank 2), 63 ranks``."""
    if len(values) == 1:
        value, n = values[0]
        return [Code(value), f" (rank {n})"]
    numbers = [(_number(v), n) for v, n in values]
    if all(x is not None for x, _ in numbers):
        low = min(range(len(values)), key=lambda i: numbers[i][0] or 0.0)
        high = max(range(len(values)), key=lambda i: numbers[i][0] or 0.0)
        return [
            Code(values[low][0]),
            f" (rank {values[low][1]}) to ",
            Code(values[high][0]),
            f" (rank {values[high][1]}), {len(values)} ranks",
        ]
    distinct = len({v for v, _ in values})
    value, n = values[0]
    return [
        f"{len(values)} ranks, {distinct} value{'s' if distinct != 1 else ''}, such as ",
        Code(value),
        f" (rank {n})",
    ]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _rank_row(row: RankRow) -> Row:
    statuses = ", ".join(f"{row.statuses[s]} {s}" for s in STATUS_LEGEND if row.statuses.get(s))
    return [
        [str(row.number)],
        [Code(row.rank.path)],
        [log_size_text(row.rank)],
        [f"{row.compile_ids} ({row.attempts} attempt{'' if row.attempts == 1 else 's'})"],
        [statuses or "—"],
        [seconds_text(row.seconds)],
        [str(row.chromium_events)],
    ]


def divergence(view: Overview) -> Block:
    """Where the ranks diverge, one kind a bullet (compile ids, statuses, caches, shapes,
    collectives, schedules, runtime estimates); or that they do not."""
    d = rank_divergence(view.trace)
    if not d.any:
        return Paragraph(
            [
                "No divergence: every rank compiled the same functions under the same compile "
                "ids, with the same statuses, "
                "the same cache hits and misses, graphs of the same input shapes issuing the "
                "same collectives in the same order, and the same schedules where Inductor "
                "logged them."
            ]
        )
    kinds = [*_compile_id_aspects(d), *_grouped_aspects(view, d), *_runtime_aspects(d)]
    return Admonition("warning", [Paragraph(["The ranks diverge."]), BulletList(kinds)])


def _compile_id_aspects(d: Divergence) -> list[list[Block]]:
    """The ranks compiled different compile ids, different functions under one, or the
    same compile id ended differently."""
    kinds: list[list[Block]] = []
    if d.missing_ids:
        details = [item(*_missing_ids(m)) for m in d.missing_ids]
        kinds.append(
            item(Strong("Diverging compile ids"), ": not every rank compiled the same functions.")
            + [BulletList(details)]
        )
    if d.function_splits:
        details = [item(*_function_split(s)) for s in d.function_splits[:20]]
        kinds.append(
            item(
                Strong("Different functions under one compile id"),
                ": the ranks compiled different code under the same number, so their "
                "pages of that compile id are not comparable.",
            )
            + [BulletList(details)]
        )
    if d.status_splits:
        details = [item(*_status_split(s)) for s in d.status_splits[:20]]
        kinds.append(
            item(Strong("Diverging statuses"), ": the same compile id ended differently.")
            + [BulletList(details)]
        )
    return kinds


def _grouped_aspects(view: Overview, d: Divergence) -> list[list[Block]]:
    """The kinds said as groups of alike ranks: cache lookups, graph shapes, each
    compile's collectives and Inductor's schedules."""
    kinds: list[list[Block]] = []
    if d.cache_groups:
        kinds.append(
            _rank_groups(
                view,
                [
                    Strong("Diverging cache hit/miss patterns"),
                    ": ranks grouped by identical sequences of lookups.",
                ],
                d.cache_groups,
            )
        )
    if d.shape_groups:
        kinds.append(
            _rank_groups(
                view,
                [
                    Strong("Diverging graph shapes"),
                    ": ranks grouped by the input shapes and dtypes their graphs were compiled "
                    "for (ranks running graphs of different shapes often explain a hang).",
                ],
                d.shape_groups,
            )
        )
    for label, groups in d.collective_groups.items():
        kinds.append(
            _rank_groups(
                view,
                [
                    Strong("Collectives parity"),
                    f" of {label} (",
                    *_first_frame(view, label),
                    "): ranks grouped by the collectives their graph issues, in order, with "
                    "shapes and arguments. Ranks whose collectives differ in order or shape "
                    "exchange the wrong tensors, or hang.",
                ],
                groups,
            )
        )
    for name, groups in d.schedule_groups.items():
        kinds.append(
            _rank_groups(
                view,
                [
                    Strong(f"Diverging {DIVERGENCE_WORDS.get(name, name)}"),
                    " (",
                    Code(name),
                    "): ranks grouped by identical payloads.",
                ],
                groups,
                aside=True,
            )
        )
    return kinds


def _runtime_aspects(d: Divergence) -> list[list[Block]]:
    """Inductor's runtime estimates that differ between ranks: fastest and slowest."""
    if not d.runtime_differs:
        return []
    spreads = [
        item(
            Code(s.label),
            f": {s.delta_ns / 1e6:.3f} ms between rank {s.fastest} "
            f"({s.fastest_ns / 1e6:.3f} ms) and rank {s.slowest} "
            f"({s.slowest_ns / 1e6:.3f} ms)",
        )
        for s in d.runtimes
        if s.delta_ns > 0
    ]
    return [
        item(
            Strong("Diverging runtime estimates"),
            ": Inductor's estimate of each graph's runtime, fastest and slowest rank.",
        )
        + [BulletList(spreads)]
    ]


def _first_frame(view: Overview, label: str) -> list[Inline]:
    """The first rank's frame of a compile id, linked."""
    found = next((c for c in view.trace.ranks[0].compiles if c.label == label), None)
    return [view.link(found)] if found is not None else [Code(label)]


def _rank_groups(
    view: Overview,
    head: list[Inline],
    groups: Sequence[RankGroup],
    aside: bool = False,
) -> list[Block]:
    """One kind of divergence: what it is, then each group of ranks with what it says
    (``Ranks 0-2: ...``, or ``Ranks 0-2 (...)`` with ``aside``), and where a group differs
    from the first, its first rank's frames that differ, linked."""
    by_number = {rank_number(view.trace, r): r for r in view.trace.ranks}

    def line(g: RankGroup) -> list[Inline]:
        ranks = ranks_text(g.ranks).capitalize()
        said = rank_group_words(g.facts)
        out: list[Inline] = [f"{ranks} ({said})" if aside else f"{ranks}: {said}"]
        rank = by_number.get(g.ranks[0]) if g.ranks else None
        frames = [c for c in rank.compiles if c.label in g.labels] if rank is not None else []
        if frames:
            out += [f"; rank {g.ranks[0]}'s ", *view.links(frames)]
        return out

    return item(*head) + [BulletList([item(*line(g)) for g in groups])]


def _missing_ids(missing: MissingIds) -> list[Inline]:
    out = joined([[Code(label)] for label in missing.labels[:12]])
    if len(missing.labels) > 12:
        out.append(f" and {len(missing.labels) - 12} more")
    out.append(f": missing on {ranks_text(missing.missing_on)}")
    return out


def _function_split(split: FunctionSplit) -> list[Inline]:
    parts: list[list[Inline]] = [
        [Code(name), f" on {ranks_text(numbers)}"]
        for name, numbers in split.ranks_by_function.items()
    ]
    return [Code(split.label), ": ", *joined(parts, "; ")]


def _status_split(split: StatusSplit) -> list[Inline]:
    by_status = "; ".join(
        f"{status} on {ranks_text(numbers)}" for status, numbers in split.ranks_by_status.items()
    )
    return [Code(split.label), f": {by_status}"]
