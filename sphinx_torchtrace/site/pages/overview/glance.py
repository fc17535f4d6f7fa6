"""The glance: the few lines a reader sees first, each with the figure it stands on."""

from __future__ import annotations

from ....trace import Compile
from ....trace.analyses import summary
from ....trace.analyses.outcome import refusal
from ...blocks import (
    AnchorLink,
    Badge,
    Block,
    Code,
    Inline,
    Lines,
    ObjectLink,
    PageLink,
    Paragraph,
    Section,
    joined,
)
from ...count_words import kinds_text
from ...plan import PageSettings, TracePlan
from ...source import maybe_strip
from ...statuses import STATUS_ORDER
from ...words import _
from .. import regions, runtime, vllm, workers
from .ranks import divergence
from .view import CELL_COMPILES, Overview, in_all_ranks


def triage_blocks(plan: TracePlan, settings: PageSettings, titled: bool = True) -> list[Block]:
    """The answer first: the trace's figures, each a link to the section that explains it;
    for several ranks, whether they diverge before anything else.  Also shown by the
    directive on the user's own page (``titled=False``: no section of ours in their page;
    its links go to the overview)."""
    t = summary.triage(plan.trace)
    index = plan.index_docname

    def to(section: str, anchor: str, text: str) -> Inline:
        return AnchorLink(index, anchor, text) if settings.shows(section) else text

    def plural(n: int, noun: str, nouns: str | None = None) -> str:
        return f"{n} {noun if n == 1 else (nouns or noun + 's')}"

    # Several ranks: the figures add up every rank's, and say so (the ranks compile the
    # same functions: "320 functions compiled" would read as 320 of them).
    several = plan.trace.is_multi_rank
    in_all = in_all_ranks(t.ranks) if several else ""
    lines: list[list[Inline]] = []
    if several:
        fewest, most = t.frames_per_rank
        each = str(most) if fewest == most else f"{fewest} to {most}"
        noun = f"{each} function{'' if most == 1 else 's'}"
        compiled: list[Inline] = [
            to("directory", "compile-directory", noun),
            f" on each of the {t.ranks} ranks ({plural(t.compile_ids, 'compile id')}, "
            f"{plural(t.attempts, 'attempt')}{in_all})",
        ]
    else:
        compiled = [
            # "functions", not "functions compiled": the statuses after it say how many
            # compiled, and an error left its function uncompiled
            to("directory", "compile-directory", plural(t.frames, "function")),
            f" ({plural(t.compile_ids, 'compile id')}, {plural(t.attempts, 'attempt')})",
        ]
    statuses = [s for s in STATUS_ORDER if t.statuses.get(s)]
    if statuses:
        compiled.append(": ")
        counts: list[list[Inline]] = [[f"{t.statuses[s]} ", Badge(s)] for s in statuses]
        if (ok := vllm.missing_explained(plan)) and ok[0] == t.statuses.get("missing"):
            counts[statuses.index("missing")] = [f"{ok[0]} {vllm.MISSING_TEXT} {ok[1]})"]
        if t.ok_with_breaks:  # never plain ok beside a break it logged
            n = t.ok_with_breaks
            counts[statuses.index("ok")].append(
                f" ({n} of them with a graph break torch resumed from, no restart)"
            )
        compiled += joined(counts)
    lines.append([_("Compiled:"), " ", *compiled])
    breaks: list[Inline] = [_("none")]
    if t.graph_breaks:
        total = plural(t.graph_breaks, "graph break")
        breaks = [to("failures", "failures-and-restarts", total)]
        kinds = kinds_text(t.graph_breaks, t.graph_break_kinds, *t.graph_break_places)
        breaks.append(in_all + kinds)
    if t.restarts:  # a restart of the analysis with no graph break is said apart
        n = t.restarts
        breaks.append(
            f" ({n} restart{'s' if n > 1 else ''} of Dynamo's analysis with no graph break)"
        )
    lines.append([_("Graph breaks:"), " ", *breaks])
    recompiles: list[Inline] = [
        to("recompiles", "recompiles-explained", plural(t.recompiles, "recompile"))
        if t.recompiles
        else _("none")
    ]
    if t.recompiled:
        by_function = t.recompiled_by_function
        per_function: list[list[Inline]] = [
            [Code(maybe_strip(fn.shown, settings.no_source)), _recompile_counts(fn, t.ranks)]
            for fn in by_function[:8]
        ]
        recompiles += [f"{in_all}: ", *joined(per_function)]
        if len(by_function) > 8:
            recompiles.append(f" and {len(by_function) - 8} more functions")
    names = summary.FrameNames(plan.frames)
    if t.limit_hits:  # counted apart: past the limit torch made no new version
        n = len(t.limit_hits)
        raised = sum(refusal(c) == "limit_raised" for c in t.limit_hits)
        how = (
            f", {'each' if raised == n else str(raised)} raised as FailOnRecompileLimitHit"
            if raised
            else ""
        )
        recompiles += [
            f"; the recompile limit refused {n} more (",
            *_compile_links(names, t.limit_hits),
            f"): no new version{how}",
        ]
    if t.error_on_recompile:  # refused too: RecompileError raised instead of compiling
        n = len(t.error_on_recompile)
        recompiles += [
            f"; error_on_recompile refused {n} more (",
            *_compile_links(names, t.error_on_recompile),
            "): RecompileError raised, no new version",
        ]
    if t.compiled_again:  # counted apart: after a failed version no guard failed
        n = t.compiled_again
        recompiles.append(
            f"; {n} compile{'s' if n > 1 else ''} of a function again after a "
            "version that failed (not a recompile: no guard failed)"
        )
    lines.append([_("Recompiles:"), " ", *recompiles])
    errors: list[Inline] = [_("none")]
    if t.errors:
        total = plural(t.errors, "compile error")
        errors = [to("failures", "failures-and-restarts", total)]
        errors.append(in_all + kinds_text(t.errors, t.error_kinds, *t.error_places))
    lines.append([_("Compile errors:"), " ", *errors])
    if t.cache:
        cache_text = ", ".join(
            plural(n, result, result + "es" if result.endswith("s") else None)
            for result, n in t.cache.items()
        )
        lines.append([_("Cache lookups:"), " ", to("cache", "compile-caches", cache_text), in_all])
    if (by_vllm := vllm.compile_seconds(plan)) is not None:  # the metrics say 0.002 s
        spent_vllm = PageLink(plan.vllm_docname, f"{by_vllm[0]:.1f} s ({by_vllm[1]})")
        lines.append([_("Compile time:"), " ", spent_vllm])
    elif t.compile_seconds is not None:
        spent: list[Inline] = [
            _("Compile time:"),
            " ",
            to("times", "compile-time", f"{t.compile_seconds:.1f} s{in_all or ' in all'}"),
        ]
        if t.slowest is not None:
            number, seconds = t.slowest
            spent.append(f"; {seconds:.1f} s on rank {number}, the slowest")
        lines.append(spent)
    if (piecewise := vllm.glance_line(plan)) is not None:
        lines.append(piecewise)
    if (regional := regions.glance_line(plan)) is not None:
        lines.append(regional)
    if (stuck := workers.glance_line(plan)) is not None:
        lines.append(stuck)
    ran = runtime.glance_line(plan, settings.shows("runtime"))
    if ran is not None:
        lines.append(ran)
    blocks: list[Block] = []
    if t.divergence is not None:
        if t.divergence.any:
            blocks.append(divergence(Overview(plan, settings)))
        else:
            blocks.append(Paragraph([_divergence_none_text(t.ranks)]))
    blocks.append(Lines(lines, classes=["torchtrace-facts", "torchtrace-triage"]))
    return [Section([_("At a glance")], blocks, anchor="at-a-glance")] if titled else blocks


def _compile_links(names: summary.FrameNames, compiles: list[Compile]) -> list[Inline]:
    """The first few compiles as links to their pages (their labels where none), and how
    many more."""
    n = len(compiles)
    links = joined(
        [
            [ObjectLink("frame", name) if (name := names(c)) else Code(c.label)]
            for c in compiles[:CELL_COMPILES]
        ]
    )
    return [*links, f" and {n - CELL_COMPILES} more" if n > CELL_COMPILES else ""]


def _recompile_counts(fn: summary.FunctionRecompiles, ranks: int) -> str:
    """`` 4`` on one rank; over several, how many on each rank that recompiled it."""
    counts = fn.per_rank
    if ranks == 1:
        return f" {counts[0]}"
    fewest, most = min(counts), max(counts)
    each = str(most) if fewest == most else f"{fewest} to {most}"
    times = "time" if most == 1 else "times"
    if len(counts) == ranks:
        return f" {each} {times} on each rank"
    return f" {each} {times} on {len(counts)} rank{'' if len(counts) == 1 else 's'}"


def _divergence_none_text(ranks: int) -> str:
    every = "Both ranks" if ranks == 2 else f"All {ranks} ranks"
    return (
        f"{every} compiled the same functions under the same compile ids, with "
        "the same statuses, caches, graph input shapes and collectives."
    )
