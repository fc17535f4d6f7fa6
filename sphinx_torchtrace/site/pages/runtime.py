"""What ran: the runtime of compiled code on the overview, the glance and frame pages.

Shown only where ``sphinx-torchtrace run --runtime`` kept torch's profile beside the log
(:mod:`...trace.runtime`): no block and no page for a log without one.  Every figure
names where it comes from: the profile's file (a download), or the log's line for a
compile's time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...trace import Compile, RankTrace
from ...trace.analyses.phases import compile_seconds
from ...trace.analyses.status import attempts_status
from ...trace.runtime import (
    RegionRuns,
    RuntimeProfile,
    Worth,
    comparable,
    rank_profiles,
    region_key,
    unshown_claims,
    worth_it,
)
from ..blocks import (
    AnchorLink,
    Block,
    BulletList,
    Code,
    Download,
    Inline,
    Lines,
    Paragraph,
    Section,
    Table,
    WebOnly,
    item,
    joined,
)
from ..plan import FramePlan, TracePlan
from ..words import _

ANCHOR = "what-ran"
#: Compile ids a glance or note names before "and N more".
NAMED = 8
#: Ranks the table of several ranks lists, the slowest first.
RANKS_LISTED = 32

Link = Callable[[Compile], Inline]


def time_text(us: float) -> str:
    """A duration for reading: ``38 µs``, ``1.25 ms``, ``2.31 s``."""
    if us < 1000:
        return f"{us:.0f} µs"
    if us < 1_000_000:
        return f"{us / 1000:.2f} ms"
    return f"{us / 1e6:.2f} s"


def _share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole > 0 else "—"


def profiles_of(
    plan: TracePlan, rank: RankTrace
) -> tuple[RuntimeProfile | None, RuntimeProfile | None]:
    return rank_profiles(plan.trace.runtime, plan.trace.ranks, rank)


def compiles_by_region(rank: RankTrace) -> dict[str, Compile]:
    """Each region name's compile: the last attempt of its compile id (the one whose code
    ran)."""
    out: dict[str, Compile] = {}
    for c in rank.compiles:
        if c.id.frame_id is None or c.id.frame_compile_id is None:
            continue
        out[region_key(c.id.frame_id, c.id.frame_compile_id, c.id.compiled_autograd_id)] = c
    return out


def _made_code(rank: RankTrace, c: Compile) -> bool:
    """A compile whose code could run: it compiled, with or without a graph break."""
    return attempts_status(rank, c) in ("ok", "break")


def _metrics_line(c: Compile) -> int | None:
    return next((m.line for m in c.metrics if m.event == "compilation_metrics"), None)


def _compile_seconds(rank: RankTrace) -> dict[str, float]:
    out = {}
    for key, c in compiles_by_region(rank).items():
        seconds = compile_seconds(c)
        if seconds is not None:
            out[key] = seconds
    return out


def _profile_source(plan: TracePlan, profile: RuntimeProfile) -> list[Inline]:
    path = plan.runtime_downloads.get(profile.path)
    shown: list[Inline] = [Code(profile.path)]
    if path is not None:
        shown.append(WebOnly([" (", Download(path, "download"), ")"]))
    return shown


def _window_text(profile: RuntimeProfile) -> str:
    if profile.steps is None:
        return "the whole run"
    first, last = profile.steps
    return f"optimizer steps {first} to {last}"


# -- the glance -------------------------------------------------------------------------


def glance_line(plan: TracePlan, shows: bool) -> list[Inline] | None:
    """``Ran:`` for the glance: compile ids that ran, never ran, and the hottest."""
    if not plan.trace.runtime:
        return None
    ran = never = 0
    hottest: tuple[float, Compile, RegionRuns] | None = None
    for rank in plan.trace.ranks:
        compiled, _eager = profiles_of(plan, rank)
        if compiled is None:
            continue
        for key, c in compiles_by_region(rank).items():
            region = compiled.regions.get(key)
            if region is not None:
                ran += 1
                if hottest is None or region.own_us > hottest[0]:
                    hottest = (region.own_us, c, region)
            elif _made_code(rank, c):
                never += 1
    if not ran and not never:
        return None
    text = f"{ran} compile id{'' if ran == 1 else 's'} ran, {never} never ran"
    if plan.trace.is_multi_rank:
        text += f" (counted over the {len(plan.trace.ranks)} ranks)"
    line: list[Inline] = [
        _("Ran:"),
        " ",
        AnchorLink(plan.index_docname, ANCHOR, text) if shows else text,
    ]
    if hottest is not None:
        _own, c, region = hottest
        line += [
            "; the hottest ",
            Code(c.label),
            f" ({region.calls} call{'' if region.calls == 1 else 's'}, {time_text(region.own_us)})",
        ]
    return line


# -- the overview ------------------------------------------------------------------------


def overview_section(
    plan: TracePlan,
    link: Link,
    for_ranks: Callable[[Sequence[RankTrace], Callable[[RankTrace], list[Block]]], list[Block]],
) -> list[Block]:
    """The "What ran" section: where time went, each region's calls, the notes, and
    whether compiling paid off where an eager run was profiled too."""
    if not plan.trace.runtime:
        return []
    intro = Paragraph(
        [
            "What ran, from torch's profiler (",
            Code("sphinx-torchtrace run --runtime"),
            "): torch marks every call of compiled code as a ",
            Code("Torch-Compiled Region"),
            " with its compile id, and every compile as ",
            Code("dynamo"),
            " (a frame's) or ",
            Code("entire_backward_compile"),
            " (a backward graph's, at its first backward pass). A region's own time leaves "
            "out the regions and compiles that ran inside it (a graph break's resume function "
            "is called from the region before it, a backward graph compiles in the region "
            "whose backward pass runs first). Eager "
            "code is the rest of the profiled time: Python and eager operators between "
            "regions.",
        ]
    )
    blocks: list[Block] = [intro]
    if plan.trace.is_multi_rank:
        blocks.extend(_slowest_rank(plan))
    blocks.extend(for_ranks(plan.trace.ranks, lambda r: _rank_blocks(plan, r, link)))
    return [Section([_("What ran")], blocks, anchor=ANCHOR)]


def _slowest_rank(plan: TracePlan) -> list[Block]:
    """Several ranks: each rank's time, the one longest in compiled code named first."""
    rows = []
    for rank in plan.trace.ranks:
        compiled, _eager = profiles_of(plan, rank)
        if compiled is not None:
            rows.append((rank, compiled))
    if len(rows) < 2:
        return []
    rows.sort(key=lambda r: (-r[1].compiled_us, r[0].rank or 0))
    slowest, p = rows[0]
    fastest = rows[-1][1].compiled_us
    table: list[list[list[Inline]]] = [
        [
            [str(rank.rank)],
            [time_text(q.compiled_us)],
            [time_text(q.eager_us)],
            [time_text(q.compiling_us)],
            [time_text(q.profiled_us)],
            [Code(q.path)],
        ]
        for rank, q in rows[:RANKS_LISTED]
    ]
    blocks: list[Block] = [
        Paragraph(
            [
                f"Rank {slowest.rank} spent the most time in compiled code: "
                f"{time_text(p.compiled_us)}, against {time_text(fastest)} on the fastest of "
                f"the {len(rows)} ranks profiled. Each rank's own figures:"
            ]
        ),
        Table(
            [
                _("Rank"),
                _("Compiled code"),
                _("Eager code"),
                _("Compiling"),
                _("Profiled"),
                _("Profile"),
            ],
            table,
            classes=["torchtrace-runtime"],
        ),
    ]
    if len(rows) > RANKS_LISTED:
        blocks.append(Paragraph([f"and {len(rows) - RANKS_LISTED} more ranks, faster"]))
    return blocks


def _rank_blocks(plan: TracePlan, rank: RankTrace, link: Link) -> list[Block]:
    compiled, eager = profiles_of(plan, rank)
    if compiled is None and unshown_claims(plan.trace.runtime, plan.trace.ranks, rank):
        return [
            Paragraph(
                [
                    "More than one runtime profile claims this rank's process (one process id "
                    "on two machines?): none is shown, as another rank's figures could be "
                    "shown as this rank's. The build's warning names them."
                ]
            )
        ]
    if compiled is None:
        return [Paragraph(["No runtime profile of this rank's process."])]
    by_region = compiles_by_region(rank)
    p = compiled
    facts: list[list[Inline]] = [
        [_("Profile:"), " ", *_profile_source(plan, p), f", {_window_text(p)}"],
        [
            _("Profiled:"),
            " ",
            time_text(p.profiled_us)
            + (f" of the process's {p.wall_s:.2f} s" if p.wall_s is not None else ""),
        ],
        [
            _("Where it went:"),
            f" compiled code {time_text(p.compiled_us)} ({_share(p.compiled_us, p.profiled_us)}), "
            f"eager code between regions {time_text(p.eager_us)} "
            f"({_share(p.eager_us, p.profiled_us)}), compiling {time_text(p.compiling_us)} "
            f"({_share(p.compiling_us, p.profiled_us)}, {p.compiles} "
            f"compile{'' if p.compiles == 1 else 's'})",
        ],
    ]
    blocks: list[Block] = [Lines(facts, classes=["torchtrace-facts"])]
    rows: list[list[list[Inline]]] = []
    for key, region in sorted(p.regions.items(), key=lambda kv: -kv[1].own_us):
        c = by_region.get(key)
        seconds = compile_seconds(c) if c is not None else None
        line = _metrics_line(c) if c is not None else None
        rows.append(
            [
                [link(c)] if c is not None else [Code(key), " (not in the log)"],
                [str(region.calls)],
                [time_text(region.own_us)],
                [time_text(region.median_us)],
                [time_text(region.first_call_us)],
                [f"{region.first_us / 1e6:.3f} s → {region.last_us / 1e6:.3f} s"],
                [f"{seconds:.3f} s (line {line})" if seconds is not None and line else "—"],
            ]
        )
    if rows:
        blocks.append(
            Table(
                [
                    _("Compile id"),
                    _("Calls"),
                    _("Own time"),
                    _("Median call"),
                    _("First call"),
                    _("First → last call"),
                    _("Compile time (log)"),
                ],
                rows,
                classes=["torchtrace-runtime"],
            )
        )
    notes = _notes(rank, p, by_region, link)
    if notes:
        blocks.append(BulletList(notes))
    if eager is not None:
        blocks.extend(_worth_blocks(plan, rank, p, eager, link))
    return blocks


def _notes(
    rank: RankTrace, p: RuntimeProfile, by_region: dict[str, Compile], link: Link
) -> list[list[Block]]:
    notes: list[list[Block]] = []
    never = [c for key, c in by_region.items() if key not in p.regions and _made_code(rank, c)]
    if never:
        named = joined([[link(c)] for c in never[:NAMED]])
        more = f" and {len(never) - NAMED} more" if len(never) > NAMED else ""
        notes.append(
            item(
                f"Compiled but never ran while profiled ({len(never)}): ",
                *named,
                more,
                ". The time spent compiling them bought nothing in this window.",
            )
        )
    once = [
        (c, p.regions[key])
        for key, c in by_region.items()
        if key in p.regions and p.regions[key].calls == 1 and (c.id.frame_compile_id or 0) > 0
    ]
    for c, region in once[:NAMED]:
        seconds = compile_seconds(c)
        cost = f", after compiling for {seconds:.3f} s" if seconds is not None else ""
        notes.append(
            item(link(c), f" is a recompile that ran once ({time_text(region.own_us)}{cost}).")
        )
    breaks = [
        (c, p.regions[key])
        for key, c in by_region.items()
        if key in p.regions and attempts_status(rank, c) == "break"
    ]
    for c, region in sorted(breaks, key=lambda b: -b[1].calls)[:NAMED]:
        notes.append(
            item(
                link(c),
                f" has a graph break and ran {region.calls} time"
                f"{'' if region.calls == 1 else 's'} ({time_text(region.median_us)} per call, "
                f"{time_text(region.own_us)} in all): each call leaves compiled code for "
                "eager code at the break, and the code after it is another region.",
            )
        )
    return notes


def _worth_blocks(
    plan: TracePlan, rank: RankTrace, compiled: RuntimeProfile, eager: RuntimeProfile, link: Link
) -> list[Block]:
    by_region = compiles_by_region(rank)
    rows = worth_it(compiled, eager, _compile_seconds(rank))
    intro: list[Inline] = [
        "Was it worth it: the same program run again with every graph on the eager backend (",
        Code("TORCH_COMPILE_OVERRIDE_BACKENDS='>=0:eager'"),
        ": the same regions, their operators run as eager PyTorch runs them), profiled in ",
        *_profile_source(plan, eager),
        ". Per call: the median of the calls after the first (the first pays for loading "
        "the compiled code). Pays off after: the calls whose time saved adds up to the "
        "compile's time (the log's entire_frame_compile_time_s).",
    ]
    if compiled.wall_s is not None and eager.wall_s is not None:
        intro.append(
            f" The whole program took {compiled.wall_s:.2f} s compiled and "
            f"{eager.wall_s:.2f} s on the eager backend."
        )
    table_rows = [_worth_row(w, by_region, link) for w in rows]
    blocks: list[Block] = [Paragraph(intro)]
    if table_rows:
        blocks.append(
            Table(
                [
                    _("Compile id"),
                    _("Calls"),
                    _("Compiled per call"),
                    _("Eager per call"),
                    _("Saved per call"),
                    _("Compile time"),
                    _("Pays off after"),
                ],
                table_rows,
                classes=["torchtrace-runtime"],
            )
        )
    caveats = comparable(compiled, eager)
    caveats.append(
        "each figure is one run's: differences of a few microseconds per call are within "
        "the noise of a busy machine"
    )
    blocks.append(Paragraph(["Where the two runs may not compare: ", "; ".join(caveats), "."]))
    return blocks


def _worth_row(w: Worth, by_region: dict[str, Compile], link: Link) -> list[list[Inline]]:
    c = by_region.get(w.compile_id)
    saved = w.saved_per_call_us
    if w.eager_us is None:
        pays = "— (not in the eager run)"
    elif w.compile_s is None:
        pays = "— (no compile time logged)"
    elif w.pays_after is None:
        pays = "never: no time saved per call"
    else:
        verdict = "paid off" if w.paid_off else "not yet"
        pays = f"{w.pays_after} calls ({verdict} after {w.calls})"
    return [
        [link(c)] if c is not None else [Code(w.compile_id)],
        [str(w.calls)],
        [time_text(w.compiled_us)],
        [time_text(w.eager_us) if w.eager_us is not None else "—"],
        [("-" if saved < 0 else "") + time_text(abs(saved)) if saved is not None else "—"],
        [f"{w.compile_s:.3f} s" if w.compile_s is not None else "—"],
        [pays],
    ]


# -- a frame page ------------------------------------------------------------------------


def frame_section(plan: TracePlan, frame: FramePlan) -> Section | None:
    """How often this compile's code ran, beside what compiling it cost."""
    if not plan.trace.runtime:
        return None
    rank, c = frame.rank, frame.compile
    compiled, eager = profiles_of(plan, rank)
    if compiled is None or c.id.frame_id is None or c.id.frame_compile_id is None:
        return None
    key = region_key(c.id.frame_id, c.id.frame_compile_id, c.id.compiled_autograd_id)
    if compiles_by_region(rank).get(key) is not c:
        return None  # an earlier attempt: its code never ran, the last attempt's did
    region = compiled.regions.get(key)
    if region is None and not _made_code(rank, c):
        return None  # no code to run: a failed or empty compile
    seconds = compile_seconds(c)
    line = _metrics_line(c)
    cost = (
        f"Compiling it took {seconds:.3f} s (entire_frame_compile_time_s, line {line} of the log)."
        if seconds is not None and line
        else "The log gives no compile time for it."
    )
    source = [" (", *_profile_source(plan, compiled), f", {_window_text(compiled)}). "]
    if region is None:
        said: list[Inline] = ["Its compiled code never ran while profiled", *source, cost]
        return Section([_("What ran")], [Paragraph(said)], anchor="ran")
    text: list[Inline] = [
        "Its compiled code ran " + ("once" if region.calls == 1 else f"{region.calls} times"),
        *source,
        f"{time_text(region.own_us)} in all (own time), a median of "
        f"{time_text(region.median_us)} per call, the first call "
        f"{time_text(region.first_call_us)}; first called {region.first_us / 1e6:.3f} s into "
        f"the profile, last {region.last_us / 1e6:.3f} s. ",
        cost,
    ]
    blocks: list[Block] = [Paragraph(text)]
    if eager is not None:
        (w,) = [r for r in worth_it(compiled, eager, _compile_seconds(rank)) if r.compile_id == key]
        if w.eager_us is not None:
            saved = w.saved_per_call_us or 0.0
            verdict = (
                "it never pays off: compiled calls are no faster"
                if w.pays_after is None
                else f"it pays off after {w.pays_after} calls"
                + (" (it did in this run)" if w.paid_off else " (not in this run)")
            )
            blocks.append(
                Paragraph(
                    [
                        f"On the eager backend a call took {time_text(w.eager_us)}, compiled "
                        f"{time_text(w.compiled_us)} ({'saving' if saved >= 0 else 'losing'} "
                        f"{time_text(abs(saved))} per call): {verdict}."
                    ]
                )
            )
    return Section([_("What ran")], blocks, anchor="ran")
