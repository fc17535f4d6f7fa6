"""The views of a ``torchtrace-diff`` comparison: what changed between two runs, as blocks.

:func:`comparison_blocks` is what the directive shows where it stands (the answer first: a
summary, then a section per kind of change); :func:`diff_frame_page` is the detail page of
one changed frame.  Every string of either log stays text (``Code``, ``CodeBlock``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...trace.analyses.compile_time import PHASE_WORDS
from ...trace.analyses.rank_digest import number_ranges
from ...trace.comparing.changes import Change, FrameDiff, RankDiff
from ...trace.comparing.regressions import Regression
from ...trace.comparing.run_frames import BreakSite
from ..blocks import (
    Admonition,
    Block,
    BulletList,
    Code,
    CodeBlock,
    Dropdown,
    Inline,
    Inlines,
    Lines,
    ObjectLink,
    Page,
    PageLink,
    Paragraph,
    Section,
    Strong,
    Table,
    Toctree,
    item,
)
from ..diff_plan import DiffFramePlan, DiffPlan
from ..phase_words import phase_words
from ..source import maybe_strip
from ..words import _
from .vllm import cells_blocks

#: Lines of a graph diff shown open; a longer one is folded.
FOLD_DIFF_LINES = 40
#: Guards listed per side on a frame page; the rest are counted.
MAX_GUARDS_SHOWN = 200
#: Functions a rank's comparison lists under its compile time, the most changed first.
FUNCTIONS_SHOWN = 10
NOISY = "compile times are noisy: compare them only between runs on the same machine"
#: What a page says of a ratio (or a time) that is no finite number, as the command does.
NOT_COMPARABLE = "cannot be compared"


def unchanged_line(plan: DiffPlan) -> Paragraph:
    return Paragraph(
        [
            f"No change in compilation between {plan.baseline_label} and {plan.new_label} "
            "(compile time aside)."
        ]
    )


def comparison_blocks(
    plan: DiffPlan,
    found: Sequence[Regression],
    warned: bool = True,
    uncompared: Sequence[str] = (),
) -> list[Block]:
    """The comparison where the directive stands: whether it compares like with like,
    summary, regressions, then the changes.  ``uncompared``: what the gate could not
    compare (:func:`...trace.comparing.regressions.uncompared`), said with what was not read."""
    setup = _setup_blocks(plan, uncompared)
    # every detail page the plan made is in this toctree, whatever the comparison says
    pages: list[Block] = [Toctree(plan.docnames, hidden=True)] if plan.docnames else []
    if plan.diff.nothing_compared:
        return [_intro(plan), *setup, *pages]
    if plan.diff.unchanged:
        return [unchanged_line(plan), *setup, *pages]
    blocks: list[Block] = [_intro(plan), *setup, Lines([[line] for line in _change_counts(plan)])]
    if found:
        heading = "Regressions" if warned else "Regressions (not warned: turned off here)"
        blocks.append(
            Admonition(
                "warning",
                [
                    Paragraph([heading]),
                    BulletList(
                        [
                            item(
                                r.message if not plan.multi_rank else f"rank {r.rank}: {r.message}"
                            )
                            for r in found
                        ]
                    ),
                ],
            )
        )
    if plan.diff.ranks_only_baseline or plan.diff.ranks_only_new:
        rows = [f"rank {n}: only in {plan.baseline_label}" for n in plan.diff.ranks_only_baseline]
        alone = {r.rank: r for r in plan.diff.new_only}
        rows += [
            f"rank {n}: only in {plan.new_label}"
            + (
                f" (compared with nothing: {len(alone[n].errors_new)} compile error(s), "
                f"{len(alone[n].breaks_new)} graph break(s))"
                if n in alone
                else ""
            )
            for n in plan.diff.ranks_only_new
        ]
        blocks += _part("Unmatched ranks", [BulletList([item(t) for t in rows])])
    for r in plan.diff.ranks:
        sections = _rank_sections(plan, r)
        if plan.multi_rank:
            alike = (
                [
                    Paragraph(
                        [
                            f"Also ranks {number_ranges(r.alike)}: alike in each run "
                            "(rank numbers, metrics and times aside), so compared once."
                        ]
                    )
                ]
                if r.alike
                else []
            )
            blocks += _part(f"Rank {r.rank}", alike)
        blocks.extend(sections)
    return blocks + pages


def _intro(plan: DiffPlan) -> Paragraph:
    content: list[Inline] = ["Baseline: "]
    content += _run_name(plan.baseline_label, plan.baseline_index)
    content += ["; new run: "]
    content += _run_name(plan.new_label, plan.new_index)
    content += [". Frames are matched by file, function and occurrence, not by compile id."]
    return Paragraph(content)


def _setup_blocks(plan: DiffPlan, uncompared: Sequence[str] = ()) -> list[Block]:
    """What differs in how the runs were made, why nothing was compared, if so, what was
    not read and what could not be compared."""
    diff = plan.diff
    out: list[Block] = []
    if diff.nothing_compared:
        out.append(
            Admonition(
                "warning",
                [
                    Paragraph(
                        [Strong("Nothing compared"), ": ", _text(plan, diff.nothing_compared) + "."]
                    )
                ],
            )
        )
    if diff.unread:
        out.append(
            Admonition(
                "warning",
                [
                    Paragraph(
                        [
                            Strong("Not read"),
                            ": what follows compares what was read; this was "
                            "not, so no regression in it can show:",
                        ]
                    ),
                    BulletList([item(_text(plan, d)) for d in diff.unread]),
                ],
            )
        )
    if uncompared:
        out.append(
            Admonition(
                "warning",
                [
                    Paragraph(
                        [
                            Strong("Not compared"),
                            ": these figures are no numbers a comparison can use, or were "
                            "not read, so no regression in them can show:",
                        ]
                    ),
                    BulletList([item(_text(plan, d)) for d in uncompared]),
                ],
            )
        )
    if diff.setup:
        out.append(
            Admonition(
                "note",
                [
                    Paragraph(
                        [
                            Strong("Not like for like"),
                            ": the runs were made differently, so some changes below may come "
                            "from the setup, not the code:",
                        ]
                    ),
                    BulletList([item(_text(plan, d)) for d in diff.setup]),
                ],
            )
        )
    return out


def _run_name(label: str, index: str | None) -> list[Inline]:
    return [PageLink(index, label)] if index is not None else [label]


def _change_counts(plan: DiffPlan) -> list[str]:
    """Counts, one line per kind of change that happened."""
    lines: list[str] = []
    for r in plan.diff.ranks:
        prefix = f"Rank {r.rank}: " if plan.multi_rank else ""
        if not r.changed:
            lines.append(f"{prefix}no change (compile time aside).")
            continue
        changed = [f for f in r.changed_frames if not f.is_new and not f.is_gone]
        parts = [
            (len(r.frames_new), "new frame", "new frames"),
            (len(r.frames_gone), "frame gone", "frames gone"),
            (len(changed), "changed frame", "changed frames"),
            (len(r.breaks_new), "new graph break", "new graph breaks"),
            (len(r.breaks_fixed), "graph break fixed", "graph breaks fixed"),
            (len(r.errors_new), "new compile error", "new compile errors"),
            (len(r.errors_fixed), "compile error fixed", "compile errors fixed"),
            (
                sum(bool(f.recompile_reasons_new) for f in r.frames),
                "frame with new recompile reasons",
                "frames with new recompile reasons",
            ),
        ]
        said = [f"{n} {one if n == 1 else many}" for n, one, many in parts if n]
        if r.cache.changed:
            said.append(f"cache {_value(r.cache.baseline)} → {_value(r.cache.new)}")
        lines.append(prefix + (", ".join(said) or "no change") + ".")
    return lines


def _rank_sections(plan: DiffPlan, r: RankDiff) -> list[Block]:
    """What changed on one rank, a titled part per kind: frames, graph breaks, compile
    errors, recompiles, cache lookups, then compile time."""
    breaks = _sites(plan, "New graph breaks", r.breaks_new) + _sites(
        plan, "Graph breaks fixed", r.breaks_fixed
    )
    errors = _sites(plan, "New compile errors", r.errors_new) + _sites(
        plan, "Compile errors fixed", r.errors_fixed
    )
    return [
        *_frames_part(plan, r),
        *(_part("Graph breaks", breaks) if breaks else []),
        *(_part("Compile errors", errors) if errors else []),
        *_recompiles_part(plan, r),
        *_cache_part(plan, r),
        *_times_part(plan, r),
        *_vllm_part(plan, r),
    ]


def _vllm_part(plan: DiffPlan, r: RankDiff) -> list[Block]:
    """vLLM's own figures in each run (its pieces carry no compile ids: the frames above
    say little of them), and its seconds per compile range."""
    v = r.vllm
    if v is None:
        return []
    blocks: list[Block] = [
        Table(
            ["run", "vLLM"],
            [
                [[plan.baseline_label], [v.baseline or "no vLLM records"]],
                [[plan.new_label], [v.new or "no vLLM records"]],
            ],
            widths=[1, 4],
        )
    ]
    ranges = v.range_seconds()
    if ranges:
        rows: list[list[Inlines]] = [
            [[Code(k)], [_seconds(old)], [_seconds(new)]] for k, old, new in ranges
        ]
        blocks.append(Paragraph(["Seconds per compile range (compiles; loads are not by range):"]))
        blocks.append(Table(["range", plan.baseline_label, plan.new_label], rows))
    blocks += cells_blocks(v, plan.baseline_label, plan.new_label)
    return _part("vLLM (noisy times)", blocks)


def _frames_part(plan: DiffPlan, r: RankDiff) -> list[Block]:
    """The changed frames, a row each, and how many others are unchanged."""
    frames = [f for f in plan.frames_of_rank(r.rank) if f.frame.changed]
    if not frames:
        return []
    rows = [_frame_row(plan, f) for f in frames]
    unchanged = len(plan.frames_of_rank(r.rank)) - len(frames)
    note = f"{unchanged} other frame(s) unchanged." if unchanged else ""
    header = [
        "frame",
        plan.baseline_label,
        plan.new_label,
        "status",
        "compiles",
        "graph ops",
        "kernels",
        "what changed",
    ]
    return _part("Frames", [Table(header, rows), *([Paragraph([note])] if note else [])])


def _recompiles_part(plan: DiffPlan, r: RankDiff) -> list[Block]:
    """The frames of both runs compiled a different number of times or for new reasons,
    each with its new reasons."""
    recompiles = [
        f
        for f in r.frames
        if f.new is not None
        and f.baseline is not None
        and (f.versions.changed or f.recompile_reasons_new)
    ]  # a new frame's compiles are in its row, not a recompile
    if not recompiles:
        return []
    items = []
    for f in recompiles:
        content: list[Inline] = [
            Code(str(f.key)),
            f": compiled {_value(f.versions.new)} time(s) (was {_value(f.versions.baseline)})",
        ]
        blocks: list[Block] = [Paragraph(content)]
        if f.recompile_reasons_new:
            blocks.append(
                BulletList(
                    [
                        [Paragraph(["new reason: ", Code(_text(plan, t))])]
                        for t in f.recompile_reasons_new
                    ]
                )
            )
        items.append(blocks)
    return _part("Recompiles", [BulletList(items)])


def _cache_part(plan: DiffPlan, r: RankDiff) -> list[Block]:
    """The cache lookups of both runs, where they differ."""
    if not r.cache.changed:
        return []
    return _part(
        "Cache",
        [
            Paragraph(
                [
                    f"Cache lookups: {_value(r.cache.baseline)} in {plan.baseline_label}, "
                    f"{_value(r.cache.new)} in {plan.new_label}."
                ]
            )
        ],
    )


def _times_part(plan: DiffPlan, r: RankDiff) -> list[Block]:
    """Compile time by phase in both runs and their ratio, said to be noisy."""
    if not r.times:
        return []
    rows: list[list[Inlines]] = [
        [[phase_words(t.phase)], [_seconds(t.baseline)], [_seconds(t.new)], [_ratio(t.ratio)]]
        for t in r.times
    ]
    return _part(
        "Compile time (noisy)",
        [
            Paragraph([NOISY + "."]),
            Table(["phase", plan.baseline_label, plan.new_label, "ratio"], rows),
            *_function_times(plan, r),
        ],
    )


def _function_times(plan: DiffPlan, r: RankDiff) -> list[Block]:
    """The functions whose compile time changed most, and the phase that changed most."""
    changed = [f for f in r.function_times if f.change][:FUNCTIONS_SHOWN]
    if not changed:
        return []
    rows: list[list[Inlines]] = []
    for f in changed:
        phase = f.most_changed_phase()
        rows.append(
            [
                [Code(f.function), f" ({f.file})"],
                [_seconds(f.baseline_seconds)],
                [_seconds(f.new_seconds)],
                [f"{f.change:+.3f} s"],
                [f"{PHASE_WORDS.get(phase[0], phase[0])} ({phase[1]:+.3f} s)"] if phase else ["—"],
            ]
        )
    more = len([f for f in r.function_times if f.change]) - len(changed)
    blocks: list[Block] = [
        Paragraph(
            [
                "By function, from each run's compile-time tree (the same seconds, split by "
                "the records' phases), the most changed first"
                + (f"; {more} more changed less" if more > 0 else "")
                + ":"
            ]
        ),
        Table(
            ["function", plan.baseline_label, plan.new_label, "change", "most changed phase"],
            rows,
        ),
    ]
    return blocks


def _part(title: str, blocks: Sequence[Block]) -> list[Block]:
    """A titled part on the user's page: a bold line, not a section of ours in their page."""
    return [Paragraph([Strong(title)]), *blocks]


def _frame_row(plan: DiffPlan, f: DiffFramePlan) -> list[Inlines]:
    d = f.frame
    name: list[Inline] = [PageLink(f.docname, str(d.key))] if f.docname else [str(d.key)]
    return [
        name,
        _side(d.baseline.label if d.baseline else None, f.baseline_object),
        _side(d.new.label if d.new else None, f.new_object),
        [_change(d.status)],
        [_change(d.versions)],
        [_change(d.graph_ops)],
        [_change(d.kernel_count)],
        [", ".join(_what_changed(d))],
    ]


def _side(label: str | None, obj: str | None) -> list[Inline]:
    if label is None:
        return ["-"]
    if obj is not None:
        return [ObjectLink("frame", obj, label)]
    return [label]


def _what_changed(d: FrameDiff) -> list[str]:
    if d.is_new:
        return ["new"]
    if d.is_gone:
        return ["gone"]
    out = ["paired by order (ambiguous)"] if d.match == "ambiguous" else []
    if d.status.changed:
        out.append("status")
    if d.versions.changed or d.recompile_reasons_new:
        out.append("recompiles")
    if d.guards_added or d.guards_removed:
        out.append(f"guards +{len(d.guards_added)} -{len(d.guards_removed)}")
    if d.graph_diff or d.graph_ops.changed or d.graph_nodes.changed:
        out.append("graph")
    if d.kernel_count.changed or d.kernels_added or d.kernels_removed or d.kernel_kinds.changed:
        out.append("kernels")
    if d.cache.changed:
        out.append("cache")
    return out


def _text(plan: DiffPlan, text: str) -> str:
    """Trace text as a comparison shows it: without user source under ``:no-source:``."""
    return maybe_strip(text, plan.no_source)


def _sites(plan: DiffPlan, title: str, sites: Sequence[BreakSite]) -> list[Block]:
    if not sites:
        return []
    items: list[list[Block]] = []
    for s in sites:
        line: list[Inline] = [Code(s.registry_id), " "] if s.registry_id else []
        line += [
            Code(_text(plan, s.reason)),
            " in ",
            Code(s.function),
            " (",
            Code(s.file.rsplit("/", 1)[-1]),
            ")",
        ]
        if s.evidence:
            line += [", logged at ", Code(s.evidence)]
        items.append([Paragraph(line)])
    return [Paragraph([f"{title}:"]), BulletList(items)]


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict):
        return ", ".join(f"{v} {k}" for k, v in value.items()) or "none"
    return str(value)


def _change(c: Change) -> str:
    if not c.changed:
        return _value(c.new)
    return f"{_value(c.baseline)} → {_value(c.new)}"


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f} s" if math.isfinite(value) else NOT_COMPARABLE


def _ratio(ratio: float | None) -> str:
    """``x1.25``; ``-`` where a run has no time; never ``xinf`` nor ``xnan``."""
    if ratio is None:
        return "-"
    return f"x{ratio:.2f}" if math.isfinite(ratio) else NOT_COMPARABLE


# -- a frame's detail page --------------------------------------------------------------------


def diff_frame_page(plan: DiffPlan, f: DiffFramePlan) -> Page:
    """What changed in one frame between the runs."""
    d = f.frame
    assert f.docname is not None
    title: list[Inline] = [f"{plan.label} · {d.key}"]
    blocks: list[Block] = [_frame_intro(plan, f)]
    facts: list[Inlines] = []
    for label, change in (
        ("Status", d.status),
        ("Compiles", d.versions),
        ("Dynamo graph ops", d.graph_ops),
        ("Dynamo graph nodes", d.graph_nodes),
        ("Kernels", d.kernel_count),
        ("Cache", d.cache),
    ):
        facts.append([f"{label}: {_change(change)}"])
    first = [x.first_line for x in (d.baseline, d.new) if x is not None]
    if first and first[-1] is not None:
        lines = " → ".join(_value(x) for x in first)
        facts.append([f"First line (shown, not compared): {lines}"])
    blocks.append(Lines(facts))
    if d.recompile_reasons_new:
        blocks.append(
            Section(
                [_("New recompile reasons")],
                [
                    BulletList(
                        [[Paragraph([Code(_text(plan, t))])] for t in d.recompile_reasons_new]
                    )
                ],
                anchor="recompiles",
            )
        )
    if d.guards_added or d.guards_removed:
        parts: list[Block] = []
        for what, guards in (("Added", d.guards_added), ("Removed", d.guards_removed)):
            if guards:
                shown = guards[:MAX_GUARDS_SHOWN]
                more = len(guards) - len(shown)
                parts.append(Paragraph([f"{what} ({len(guards)}):"]))
                text = "\n".join(shown) + (f"\n... ({more} more)" if more else "")
                parts.append(CodeBlock(_text(plan, text), "text"))
        blocks.append(Section([_("Guards")], parts, anchor="guards"))
    if d.graph_diff:
        code = CodeBlock(_text(plan, d.graph_diff), "diff")
        n = d.graph_diff.count("\n") + 1
        graph: Block = (
            code if n <= FOLD_DIFF_LINES else Dropdown([f"Dynamo graph diff ({n} lines)"], [code])
        )
        blocks.append(Section([_("Dynamo graph")], [graph], anchor="graph"))
    if d.kernels_added or d.kernels_removed or d.kernel_kinds.changed:
        kparts: list[Block] = [Paragraph([f"Kinds: {_change(d.kernel_kinds)}"])]
        for what, names in (("Added", d.kernels_added), ("Removed", d.kernels_removed)):
            if names:
                kparts.append(Paragraph([f"{what}: "] + _codes(names)))
        blocks.append(Section([_("Kernels")], kparts, anchor="kernels"))
    if d.seconds.baseline is not None or d.seconds.new is not None:
        blocks.append(
            Section(
                [_("Compile time (noisy)")],
                [
                    Paragraph(
                        [f"{_seconds(d.seconds.baseline)} → {_seconds(d.seconds.new)}; {NOISY}."]
                    )
                ],
                anchor="compile-time",
            )
        )
    return Page(f.docname, title, blocks)


def _frame_intro(plan: DiffPlan, f: DiffFramePlan) -> Paragraph:
    d = f.frame
    content: list[Inline] = ["Frame ", Code(d.key.function), " of ", Code(d.key.file)]
    if d.key.occurrence > 1:
        content.append(f" (occurrence {d.key.occurrence})")
    if d.is_new:
        content.append(f": new in {plan.new_label} (")
        content += _side(d.new.label if d.new else None, f.new_object)
        content.append(").")
    elif d.is_gone:
        content.append(f": gone from {plan.new_label} (was ")
        content += _side(d.baseline.label if d.baseline else None, f.baseline_object)
        content.append(").")
    else:
        content.append(f": {plan.baseline_label} ")
        content += _side(d.baseline.label if d.baseline else None, f.baseline_object)
        content.append(f", {plan.new_label} ")
        content += _side(d.new.label if d.new else None, f.new_object)
        content.append(".")
    return Paragraph(content)


def _codes(names: Sequence[str]) -> list[Inline]:
    out: list[Inline] = []
    for i, name in enumerate(names[:200]):
        if i:
            out.append(", ")
        out.append(Code(name))
    if len(names) > 200:
        out.append(f" ... ({len(names) - 200} more)")
    return out
