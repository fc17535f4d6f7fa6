"""Recompiles: which functions compiled again, and the guard that failed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ....trace import Compile, RankTrace
from ....trace.analyses.guards import GuardFailure
from ....trace.analyses.outcome import Outcome, Refusal, failure_outcome, refusal
from ....trace.analyses.recompiles import Recompile, RecompiledFunction, recompiled_functions
from ....trace.analyses.settings import recompile_limits
from ...blocks import (
    Block,
    Code,
    Dropdown,
    Emphasis,
    Inline,
    Paragraph,
    Section,
    Strong,
    Table,
    joined,
)
from ...guard_words import guard_words
from ...outcome_words import REFUSAL_WORDS, refusal_outcome
from ...source import maybe_strip
from ...words import _
from .view import Overview, Row

#: Functions whose recompiles are listed open; more are folded under the merged reasons.
RECOMPILE_FUNCTIONS_OPEN = 3


def section(view: Overview) -> list[Block]:
    if not any(recompiled_functions(r) for r in view.trace.ranks):  # as the glance
        return []
    limits = recompile_limits(view.configs)
    limit_text = ", later ".join(map(str, limits)) + " in this run" if limits else "8 by default"
    intro = Paragraph(
        [
            "A ",
            Emphasis("recompile"),
            " happens when an already compiled function is called with inputs that fail one of "
            "the checks (guards) recorded when it was compiled, for example a tensor with a new "
            "shape or dtype, so PyTorch compiles one more version of it. Each version costs "
            "compile time; after ",
            Code("recompile_limit"),
            f" versions ({limit_text}) PyTorch compiles no new version of the function. ",
            *_refusals_text(view),
            " Each row names the earlier version whose check failed, where the log records it.",
            *_accumulated_limit(view),
        ]
    )
    bodies = view.for_ranks(view.trace.ranks, lambda r: _recompiles_of(view, r))
    return [Section([_("Recompiles explained")], [intro, *bodies], anchor="recompiles-explained")]


def _refusals_text(view: Overview) -> list[Inline]:
    """What the log shows this run did where torch made no new version: each kind of
    refusal with what followed, as the records say; that none occurred, where none did."""
    groups: dict[tuple[Refusal, Outcome], list[Compile]] = {}
    for rank in view.trace.ranks:
        for fn in recompiled_functions(rank):
            for rc in fn.refused:
                kind = refusal(rc.compile)
                found = failure_outcome(rc.compile)
                if kind is not None:
                    ended: Outcome = found.outcome if found is not None else "not_recorded"
                    groups.setdefault((kind, ended), []).append(rc.compile)
    if not groups:
        return ["In this run no function was refused a new version."]
    said: list[Inline] = []
    for (refused, outcome), compiles in groups.items():
        n = len(compiles)
        calls = f"{n} call{'s' if n > 1 else ''}"
        said += [
            f"{REFUSAL_WORDS[refused]}: at {calls} (",
            *view.links(compiles),
            f") torch made no new version; {refusal_outcome(refused, outcome)}. ",
        ]
    return said[:-1] + [str(said[-1]).rstrip()]


def _accumulated_limit(view: Overview) -> list[Inline]:
    """The other limit, where the run set it below PyTorch's 256: it stops a function too."""
    limits = recompile_limits(view.configs, accumulated=True)
    if not limits or limits == [256]:
        return []
    said = ", later ".join(map(str, limits))
    return [
        " Here ",
        Code("accumulated_recompile_limit"),
        f" ({said} in this run) counts the "
        "versions of all the frames of one code object, and stops them the same way.",
    ]


def _recompiles_of(view: Overview, rank: RankTrace) -> list[Block]:
    functions = recompiled_functions(rank)
    if not functions:
        return [Paragraph(["No function was recompiled."])]
    blocks: list[Block] = []
    for fn in functions:
        n = len(fn.recompiles)
        versions = max(fn.versions, n + 1) if n else fn.versions  # a recompile has an earlier
        frame: list[Inline] = [" (", Code(fn.frame_label), ")"] if fn.function else []
        refused = len(fn.refused)
        blocks.append(
            Paragraph(
                [
                    Strong(maybe_strip(fn.shown, view.settings.no_source)),
                    *frame,
                    f": {versions} version{'s' if versions != 1 else ''}"
                    + (
                        f" in {fn.runs} runs of its compile ids (they start again after a reset)"
                        if fn.runs > 1
                        else ""
                    )
                    + f", {n} recompile{'s' if n != 1 else ''}"
                    + (f"; {refused} refused (no version made)" if refused else "")
                    + ".",
                ]
            )
        )
        rows = [row for rc in fn.recompiles for row in _recompile_rows(view, rc)]
        rows += [row for rc in fn.refused for row in _recompile_rows(view, rc, refused=True)]
        header = ["New version", "Did not fit", "Failed check (guard)", "In plain words"]
        blocks.append(Table(header, rows, widths=[1, 1, 4, 3]))
    merged = _recompiles_by_reason(view, functions)
    if len(functions) <= RECOMPILE_FUNCTIONS_OPEN:
        return [*merged, *blocks]
    title = f"Each recompile of the {len(functions)} functions, with every failed check"
    return [*merged, Dropdown([title], blocks)]


def _recompiles_by_reason(view: Overview, functions: Sequence[RecompiledFunction]) -> list[Block]:
    """Identical reasons merged across functions, with counts: thirty functions recompiled
    for one reason are one row, not thirty tables."""
    groups: dict[str, tuple[list[Compile], Counter[str]]] = {}
    for fn in functions:
        for rc in fn.recompiles:
            first = rc.headline
            reason = guard_words(first.kind) if first is not None else "no reason logged"
            compiles, names = groups.setdefault(reason, ([], Counter()))
            compiles.append(rc.compile)
            names[maybe_strip(fn.shown, view.settings.no_source)] += 1
    if not groups:
        return []
    rows: list[Row] = []
    for reason, (compiles, names) in sorted(groups.items(), key=lambda kv: -len(kv[1][0])):
        per_function: list[list[Inline]] = [
            [Code(name), f" ×{n}" if n > 1 else ""] for name, n in names.most_common(8)
        ]
        more = f" and {len(names) - 8} more" if len(names) > 8 else ""
        rows.append(
            [[reason], [str(len(compiles))], [*joined(per_function), more], view.links(compiles)]
        )
    header = [
        "Why (the failed check of the latest version compiled in the same grad mode and "
        "autocast state)",
        "Recompiles",
        "Functions",
        "New versions",
    ]
    table = Table(header, rows, widths=[4, 1, 3, 3], classes=["torchtrace-recompile-reasons"])
    return [table]


def _recompile_rows(view: Overview, recompile: Recompile, refused: bool = False) -> list[Row]:
    first: list[Inline] = [view.link(recompile.compile)]
    if refused:
        first.append(" (refused: no version)")
    elif recompile.same_graph_cached:  # the same code made again: only the guards differ
        first.append(" (the same graph again, every cache lookup a hit)")
    if not recompile.reasons:
        return [[first, ["—"], ["—"], ["no reason logged"]]]
    rows: list[Row] = []
    for i, reason in enumerate(recompile.reasons[:8]):
        rows.append(
            [
                first if i == 0 else [],
                _previous_cell(view, reason),
                [Code(reason.guard)] if reason.guard else ["—"],
                [guard_words(reason.kind)],
            ]
        )
    return rows


def _previous_cell(view: Overview, reason: GuardFailure) -> list[Inline]:
    if reason.previous is not None:
        return [view.link(reason.previous)]
    if reason.previous_label:
        return [Code(reason.previous_label)]
    return ["—"]
