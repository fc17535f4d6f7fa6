"""The glance: the few lines a reader sees first, each with the figure it stands on."""

from __future__ import annotations

from dataclasses import dataclass

from ....trace import Compile
from ....trace.analyses.caches import bundled
from ....trace.analyses.glance import FunctionRecompiles, Triage, triage
from ....trace.analyses.naming import FrameNames
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
from .. import autotuning, regions, runtime, vllm, workers
from .ranks import divergence
from .view import CELL_COMPILES, Overview, in_all_ranks


def triage_blocks(plan: TracePlan, settings: PageSettings, titled: bool = True) -> list[Block]:
    """The answer first: the trace's figures, each a link to the section that explains it;
    for several ranks, whether they diverge before anything else.  Also shown by the
    directive on the user's own page (``titled=False``: no section of ours in their page;
    its links go to the overview)."""
    g = _Glance(plan, settings, triage(plan.trace))
    lines = [
        [_("Compiled:"), " ", *_compiled(g)],
        [_("Graph breaks:"), " ", *_graph_breaks(g)],
        [_("Recompiles:"), " ", *_recompiles(g)],
        [_("Compile errors:"), " ", *_errors(g)],
        *_cache_line(g),
        *_compile_time_line(g),
    ]
    for line in (
        vllm.glance_line(plan),
        regions.glance_line(plan),
        autotuning.glance_line(plan),
        workers.glance_line(plan),
        runtime.glance_line(plan, settings.shows("runtime")),
    ):
        if line is not None:
            lines.append(line)
    blocks: list[Block] = []
    t = g.t
    if t.divergence is not None:
        if t.divergence.any:
            blocks.append(divergence(Overview(plan, settings)))
        else:
            blocks.append(Paragraph([_divergence_none_text(t.ranks)]))
    blocks.append(Lines(lines, classes=["torchtrace-facts", "torchtrace-triage"]))
    return [Section([_("At a glance")], blocks, anchor="at-a-glance")] if titled else blocks


@dataclass(frozen=True)
class _Glance:
    """What every line of the glance reads: the trace's figures, and where they link."""

    plan: TracePlan
    settings: PageSettings
    t: Triage

    @property
    def in_all(self) -> str:
        """Several ranks: the figures add up every rank's, and say so (the ranks compile
        the same functions: "320 functions compiled" would read as 320 of them)."""
        return in_all_ranks(self.t.ranks) if self.plan.trace.is_multi_rank else ""

    def to(self, section: str, anchor: str, text: str) -> Inline:
        """A link to the overview's section that explains a figure, where it is shown."""
        shown = self.settings.shows(section)
        return AnchorLink(self.plan.index_docname, anchor, text) if shown else text


def _plural(n: int, noun: str, nouns: str | None = None) -> str:
    return f"{n} {noun if n == 1 else (nouns or noun + 's')}"


def _compiled(g: _Glance) -> list[Inline]:
    """How many functions, compile ids and attempts, and how many of each status."""
    t = g.t
    if g.plan.trace.is_multi_rank:
        fewest, most = t.frames_per_rank
        each = str(most) if fewest == most else f"{fewest} to {most}"
        noun = f"{each} function{'' if most == 1 else 's'}"
        compiled: list[Inline] = [
            g.to("directory", "compile-directory", noun),
            f" on each of the {t.ranks} ranks ({_plural(t.compile_ids, 'compile id')}, "
            f"{_plural(t.attempts, 'attempt')}{g.in_all})",
        ]
    else:
        compiled = [
            # "functions", not "functions compiled": the statuses after it say how many
            # compiled, and an error left its function uncompiled
            g.to("directory", "compile-directory", _plural(t.frames, "function")),
            f" ({_plural(t.compile_ids, 'compile id')}, {_plural(t.attempts, 'attempt')})",
        ]
    statuses = [s for s in STATUS_ORDER if t.statuses.get(s)]
    if statuses:
        compiled.append(": ")
        counts: list[list[Inline]] = [[f"{t.statuses[s]} ", Badge(s)] for s in statuses]
        apart = {
            (c.label, c.status, c.metrics_apart[0].line)
            for r in g.plan.trace.ranks
            for c in r.compiles
            if c.metrics_apart
        }
        said = {status for _, status, _ in apart}
        if len(said) == 1 and (status := said.pop()) in statuses:  # where that status was read
            n, line = len(apart), min(line for *_, line in apart)
            counts[statuses.index(status)].append(
                f" ({n} of them Dynamo's capture for vLLM's compile, whose compilation metrics "
                f"vLLM logged without a compile id, after its pieces: line {line})"
            )
        if t.ok_with_breaks:  # never plain ok beside a break it logged
            n = t.ok_with_breaks
            counts[statuses.index("ok")].append(
                f" ({n} of them with a graph break torch resumed from, no restart)"
            )
        compiled += joined(counts)
    return compiled


def _graph_breaks(g: _Glance) -> list[Inline]:
    """How many graph breaks, of which kinds and where; restarts with no break apart."""
    t = g.t
    breaks: list[Inline] = [_("none")]
    if t.graph_breaks:
        total = _plural(t.graph_breaks, "graph break")
        breaks = [g.to("failures", "failures-and-restarts", total)]
        kinds = kinds_text(t.graph_breaks, t.graph_break_types, *t.graph_break_places)
        breaks.append(g.in_all + kinds)
    if t.restarts:  # a restart of the analysis with no graph break is said apart
        n = t.restarts
        breaks.append(
            f" ({n} restart{'s' if n > 1 else ''} of Dynamo's analysis with no graph break)"
        )
    return breaks


def _recompiles(g: _Glance) -> list[Inline]:
    """How many recompiles and of which functions; then, counted apart, the compiles the
    limit or ``error_on_recompile`` refused and those after a failed version."""
    t = g.t
    recompiles: list[Inline] = [
        g.to("recompiles", "recompiles-explained", _plural(t.recompiles, "recompile"))
        if t.recompiles
        else _("none")
    ]
    if t.recompiled:
        by_function = t.recompiled_by_function
        per_function: list[list[Inline]] = [
            [Code(maybe_strip(fn.shown, g.settings.no_source)), _recompile_counts(fn, t.ranks)]
            for fn in by_function[:8]
        ]
        recompiles += [f"{g.in_all}: ", *joined(per_function)]
        if len(by_function) > 8:
            recompiles.append(f" and {len(by_function) - 8} more functions")
    return recompiles + _refused(g)


def _refused(g: _Glance) -> list[Inline]:
    """The compiles that made no new version: refused past the recompile limit or by
    ``error_on_recompile``, and compiles again after a version that failed."""
    t = g.t
    names = FrameNames(g.plan.frames)
    refused: list[Inline] = []
    if t.limit_hits:  # counted apart: past the limit torch made no new version
        n = len(t.limit_hits)
        raised = sum(refusal(c) == "limit_raised" for c in t.limit_hits)
        how = (
            f", {'each' if raised == n else str(raised)} raised as FailOnRecompileLimitHit"
            if raised
            else ""
        )
        refused += [
            f"; the recompile limit refused {n} more (",
            *_compile_links(names, t.limit_hits),
            f"): no new version{how}",
        ]
    if t.error_on_recompile:  # refused too: RecompileError raised instead of compiling
        n = len(t.error_on_recompile)
        refused += [
            f"; error_on_recompile refused {n} more (",
            *_compile_links(names, t.error_on_recompile),
            "): RecompileError raised, no new version",
        ]
    if t.compiled_again:  # counted apart: after a failed version no guard failed
        n = t.compiled_again
        refused.append(
            f"; {n} compile{'s' if n > 1 else ''} of a function again after a "
            "version that failed (not a recompile: no guard failed)"
        )
    return refused


def _errors(g: _Glance) -> list[Inline]:
    """How many compile errors, of which kinds and where."""
    t = g.t
    if not t.errors:
        return [_("none")]
    total = _plural(t.errors, "compile error")
    return [
        g.to("failures", "failures-and-restarts", total),
        g.in_all + kinds_text(t.errors, t.error_types, *t.error_places),
    ]


def _cache_line(g: _Glance) -> list[list[Inline]]:
    """The cache lookups by result, where the trace logged any; FX graphs loaded from
    inside AOT-autograd cache entries apart (no lookups: :mod:`...analyses.caches`)."""
    loads = sum(len(bundled(c)) for r in g.plan.trace.ranks for c in r.compiles)
    if not g.t.cache and not loads:
        return []
    cache_text = ", ".join(
        _plural(n, result, result + "es" if result.endswith("s") else None)
        for result, n in g.t.cache.items()
    )
    besides = (
        f"{'; besides, ' if cache_text else 'none; '}"
        f"{_plural(loads, 'FX graph')} loaded from inside AOT-autograd cache entries"
        if loads
        else ""
    )
    link = g.to("cache", "compile-caches", cache_text + besides)
    return [[_("Cache lookups:"), " ", link, g.in_all]]


def _compile_time_line(g: _Glance) -> list[list[Inline]]:
    """The time spent compiling: vLLM's own figure where it logged one (the metrics say
    0.002 s), else the metrics' sum, and the slowest rank's."""
    t = g.t
    if (by_vllm := vllm.compile_seconds(g.plan)) is not None:
        spent_vllm = PageLink(g.plan.vllm_docname, f"{by_vllm[0]:.1f} s ({by_vllm[1]})")
        return [[_("Compile time:"), " ", spent_vllm]]
    if t.compile_seconds is None:
        return []
    spent: list[Inline] = [
        _("Compile time:"),
        " ",
        g.to("times", "compile-time", f"{t.compile_seconds:.1f} s{g.in_all or ' in all'}"),
    ]
    if t.slowest is not None:
        number, seconds = t.slowest
        spent.append(f"; {seconds:.1f} s on rank {number}, the slowest")
    return [spent]


def _compile_links(names: FrameNames, compiles: list[Compile]) -> list[Inline]:
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


def _recompile_counts(fn: FunctionRecompiles, ranks: int) -> str:
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
