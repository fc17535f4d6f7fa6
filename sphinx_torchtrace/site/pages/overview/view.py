"""What every section of the overview needs: the plan, the settings, figures computed once,
and how a compile is linked."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ....trace import Compile, RankTrace, Trace
from ....trace.analyses.naming import FrameNames, rank_number
from ....trace.analyses.overview_sections import SECTION_KEYS
from ....trace.analyses.rank_digest import number_ranges
from ....trace.analyses.settings import config_runs
from ....trace.analyses.timings import MAX_SECONDS, plausible
from ...artifacts import size_text
from ...blocks import AnchorLink, Block, Code, Inline, ObjectLink, Paragraph, Tab, TabSet, joined
from ...plan import RANK_TABS, PageSettings, TracePlan

#: Compile ids one table cell lists before "and N more".
CELL_COMPILES = 20


FrameLink = Callable[[Compile], Inline]


Row = list[list[Inline]]  # a table row: the inline content of each cell


@dataclass
class Overview:
    """What every section needs: the plan, the settings, and figures computed once."""

    plan: TracePlan
    settings: PageSettings
    names: FrameNames = field(init=False)
    configs: list[dict[str, dict[str, Any]]] = field(init=False)
    config_runs: list[tuple[dict[str, dict[str, Any]], int]] = field(init=False)
    wanted: frozenset[str] = field(init=False)
    declared: set[str] = field(init=False, default_factory=set)  # graph-break objects

    def __post_init__(self) -> None:
        self.names = FrameNames(self.plan.frames)
        self.config_runs = config_runs(self.plan.trace)
        self.configs = [config for config, _ in self.config_runs]
        self.wanted = frozenset(k for k in SECTION_KEYS if self.settings.shows(k))

    @property
    def trace(self) -> Trace:
        return self.plan.trace

    @property
    def multi(self) -> bool:
        return self.plan.trace.is_multi_rank

    @property
    def compiles(self) -> list[Compile]:
        return [c for r in self.plan.trace.ranks for c in r.compiles]  # past the cap too

    def link(self, compile_: Compile) -> Inline:
        """A compile's frame page with its status badge; its label where it has no page."""
        name = self.names(compile_)
        return ObjectLink("frame", name) if name else Code(compile_.label)

    def links(self, compiles: Sequence[Compile], limit: int = CELL_COMPILES) -> list[Inline]:
        out = joined([[self.link(c)] for c in compiles[:limit]])
        if len(compiles) > limit:
            out.append(f" and {len(compiles) - limit} more")
        return out

    def for_ranks(
        self, ranks: Sequence[RankTrace], body: Callable[[RankTrace], list[Block]]
    ) -> list[Block]:
        """One body per rank: as it is for a single log, in synchronized tabs for several;
        one tab per class of alike ranks (its first rank's body), at most
        :data:`RANK_TABS` (the others are listed under Ranks, each linked to its pages)."""
        if not self.multi:
            return [b for r in ranks for b in body(r)]
        classes: dict[int, list[RankTrace]] = {}
        for rank in ranks:
            rank_plan = self.plan.rank_plan(rank)
            first = rank_plan.same_as if rank_plan is not None else None
            classes.setdefault(id(first.rank if first is not None else rank), []).append(rank)
        tabs = []
        for members in list(classes.values())[:RANK_TABS]:
            numbers = [rank_number(self.trace, r) for r in members]
            title = f"Rank {numbers[0]}" if len(numbers) == 1 else f"Ranks {number_ranges(numbers)}"
            shown = body(members[0])
            if len(numbers) > 1 and shown:  # one rank's figures stand for the class's
                others = ranks_text(numbers[1:])
                shown.insert(
                    0,
                    Paragraph(
                        [
                            f"Rank {numbers[0]}'s figures, which {others} logged alike (their own "
                            "times and metrics are under ",
                            AnchorLink(self.plan.index_docname, "ranks", "Ranks"),
                            ").",
                        ]
                    ),
                )
            tabs.append(Tab(title, shown, sync=f"rank-{numbers[0]}"))
        blocks: list[Block] = [TabSet(tabs)]
        if len(classes) > RANK_TABS:
            rest = sum(len(m) for m in list(classes.values())[RANK_TABS:])
            blocks.append(
                Paragraph(
                    [
                        f"The tabs show the first {RANK_TABS} classes of alike ranks; the other "
                        f"{rest} ranks are listed under ",
                        AnchorLink(self.plan.index_docname, "ranks", "Ranks"),
                        ", each with the compiles it differs in, linked to their pages.",
                    ]
                )
            )
        return blocks


def counted(n: int, noun: str) -> str:
    return f"{n} {noun if n == 1 else noun + 's'}"


def ranks_text(numbers: Sequence[int]) -> str:
    word = "rank" if len(numbers) == 1 else "ranks"
    return f"{word} {number_ranges(numbers)}"  # a thousand ranks: runs, ``0-511, 513``


def seconds_text(value: float | None) -> str:
    """``1.234 s``, or a dash where nothing (or nothing a compile could take) was logged."""
    seconds = plausible(value, MAX_SECONDS * 1e3)  # sums of many compiles' times
    return "—" if seconds is None else f"{seconds:.3f} s"


def duration_text(seconds: float | None) -> str:
    """``23.4 s``, ``5 min 3 s``, ``2 h 7 min``, ``141 days``: what a reader can take in of
    how long a log ran (the model keeps the seconds)."""
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min"
    return f"{hours // 24} days"


def in_all_ranks(ranks: int) -> str:
    """What a figure summed over several ranks is said with."""
    return " in both ranks" if ranks == 2 else f" in all {ranks} ranks"


def log_size_text(rank: RankTrace) -> str:
    """The log file's size, and the text read of it where that differs: a gzip log's
    unpacked text, or the part of a log read up to the size limit."""
    if not rank.file_size or rank.file_size == rank.size:
        return size_text(rank.size)
    what = "unpacked" if rank.path.endswith(".gz") else "read"
    return f"{size_text(rank.file_size)} ({size_text(rank.size)} {what})"
