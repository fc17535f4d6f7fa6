"""The vLLM page: vLLM's piecewise compiles as a reader of a vLLM log wants them.

Read from :mod:`...trace.analyses.vllm` (log order, not compile ids): a headline, the
ranges-and-sizes × subgraphs matrix with times, caches, kernels and a link per cell, the
ops that split the graph, the config that shapes compilation, the guards on the
token-count symbol and a warm start's loads.  Every figure says the log line it is read
from; any vLLM record or field this page does not know is listed as logged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ...trace import Artifact, Compile, Metrics, RankTrace
from ...trace.analyses import vllm as v
from ...trace.analyses.naming import rank_number
from ...trace.comparing.vllm_change import VllmChange
from ..blocks import (
    Admonition,
    Block,
    Code,
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
    capped_table,
    joined,
)
from ..plan import TITLE_SEPARATOR, PageSettings, TracePlan
from ..words import _

#: Characters of a logged value shown in a cell.
VALUE_LIMIT = 300
#: Rows of a table of records (loads, pieces, guards) shown at most.
ROWS = 500
TITLE = "vLLM compile"

AOT_TEXT = (
    "That is how vLLM's ahead-of-time compile (VLLM_USE_AOT_COMPILE, on by default with "
    "torch 2.10 and later) is logged: torch runs vLLM's backend outside Dynamo's compile "
    "context. The compile is not missing and the page of records without a compile id is "
    "not empty: it holds the compiles below."
)
STDOUT_TEXT = (
    'vLLM\'s own message "Compiling a graph for compile range (a, b) takes N s" times from '
    "the last start of the first subgraph to the end of the last one; as vLLM compiles every "
    "range of one subgraph before the next subgraph, that is no per-range time. The row "
    "totals here are: each piece's wall time runs from its compile start to the next one."
)


def vllm_page(plan: TracePlan, settings: PageSettings) -> Page:
    """The page of vLLM's compiles of every log of the trace that logged them."""
    del settings  # the page shows no source code of the user's
    views = [(rank, view) for rank in plan.trace.ranks if (view := v.vllm_view(rank))]
    blocks: list[Block] = []
    several = len(views) > 1
    for rank, view in views:
        body = _rank_blocks(plan, rank, view)
        if several:
            number = rank_number(plan.trace, rank)
            blocks.append(Section([f"Rank {number}"], body, anchor=f"rank-{number}"))
        else:
            blocks += body
    if not views:
        blocks.append(Paragraph(["No log of this trace holds vLLM's compile records."]))
    title = f"{TITLE}{TITLE_SEPARATOR}{plan.label}"
    return Page(plan.vllm_docname, [title], blocks, orphan=True)


class _Links:
    """Links from a rank's records to the pages that show them."""

    def __init__(self, plan: TracePlan, rank: RankTrace) -> None:
        self.plan = plan
        self.owner: dict[int, Compile] = {id(a): c for c in rank.compiles for a in c.artifacts}
        self.unknown = next((c for c in rank.compiles if c.id.is_unknown), None)

    def record(self, artifact: Artifact | None, text: str) -> Inline:
        """A link to where a graph or code is shown, else to its compile's page."""
        if artifact is None:
            return text
        c = self.owner.get(id(artifact))
        frame = self.plan.frame_for(c) if c is not None else None
        if frame is None:
            return text
        graph = frame.graph_for(artifact)
        if graph is not None:
            return ObjectLink("graph", graph.name, text)
        return ObjectLink("frame", frame.name, text)

    def no_id_page(self, text: str) -> Inline:
        frame = self.plan.frame_for(self.unknown) if self.unknown is not None else None
        return ObjectLink("frame", frame.name, text) if frame is not None else text


def _rank_blocks(plan: TracePlan, rank: RankTrace, view: v.VllmView) -> list[Block]:
    links = _Links(plan, rank)
    blocks: list[Block] = [*_headline(view, links)]
    calls = view.shown_calls
    shared = view.shared_settings()
    if shared:
        blocks += _shared_config(view, shared)
    for i, call in enumerate(calls):
        body = _call_blocks(view, call, links, set(shared))
        if len(calls) > 1:
            body = _tagged(body, f"-{i + 1}")  # each call's anchors its own
            where = f" (line {call.line})" if call.line is not None else ""
            title = f"Compile call {i + 1}: {view.call_label(call)}{where}"
            blocks.append(Section([title], body, anchor=f"call-{i + 1}"))
        else:
            blocks += body
    blocks += _loads(view, links)
    blocks += _symbol(view)
    blocks += _unknown(view, links)
    return blocks


def _tagged(blocks: Sequence[Block], tag: str) -> list[Block]:
    """The blocks with ``tag`` after every anchor of theirs (sections and folds), so that
    several compile calls on one page do not share one."""
    out: list[Block] = []
    for block in blocks:
        if isinstance(block, (Section, Dropdown)):
            anchor = f"{block.anchor}{tag}" if block.anchor else None
            block = replace(block, anchor=anchor, blocks=_tagged(block.blocks, tag))
        out.append(block)
    return out


def _shared_config(view: v.VllmView, shared: dict[str, Any]) -> list[Block]:
    """The config fields all calls logged alike, once (each call's section has the rest)."""
    calls = [c for c in view.shown_calls if c.config is not None]
    lines = ", ".join(str(c.config.line) for c in calls if c.config is not None)
    keys = [k for k in v.SHAPING_FIELDS if k in shared] + [
        k for k in shared if k not in v.SHAPING_FIELDS
    ]
    rows: list[list[Inlines]] = [[[Code(_cut(k))], _shown_value(k, shared[k])] for k in keys]
    intro = Paragraph(
        [
            f"The {len(calls)} compile calls' configs (vllm_compilation_config, lines {lines}) "
            f"agree on {len(keys)} fields, shown once here; each call's section shows the "
            "fields where they differ."
        ]
    )
    return [
        Section(
            [_("Config shared by the compile calls")],
            [intro, Table(["Field", "Value"], rows[:ROWS])],
            anchor="vllm-shared-config",
        )
    ]


# --------------------------------------------------------------------------- headline


def _headline(view: v.VllmView, links: _Links) -> list[Block]:
    lines: list[Inlines] = []
    configured = [c for c in view.shown_calls if c.config is not None]
    call = configured[0] if len(configured) == 1 else None
    if len(configured) > 1:
        named: list[Inlines] = [[Code(view.call_label(c)), f" (line {c.line})"] for c in configured]
        lines.append([_("Compile calls:"), f" {len(configured)}: ", *joined(named)])
    if call is not None:
        where = f" (vllm_compilation_config, line {call.config.line})" if call.config else ""
        model = _value(call.settings.get("model"))
        prefix = call.settings.get("prefix")
        model_line: list[Inline] = [_("Model:"), " ", Code(model)]
        if prefix:
            model_line += [" prefix ", Code(_cut(prefix))]
        lines.append([*model_line, where])
        lines.append(
            [
                _("Mode:"),
                " ",
                Code(call.mode or "not logged"),
                "; backend ",
                Code(_value(call.settings.get("backend"))),
            ]
        )
    elif not configured:
        lines.append([_("Model:"), " not logged (no vllm_compilation_config in this log)"])
    pieces, reused = view.pieces, view.reused
    subgraphs = len({p.submod for p in view.compiled})
    start = {
        "cold": f"cold: {len(view.compiled)} piecewise compiles of {subgraphs} subgraph"
        f"{'' if subgraphs == 1 else 's'}",
        "warm": f"warm: {view.loaded_count} pieces loaded from a cache, none compiled",
        "no compile": f"{len(pieces)} piecewise compile starts, none followed by a compile",
    }[view.startup]
    start += f"; {len(reused)} reused in-process" if reused else "; none reused"
    if view.loaded_count and not view.warm:
        start += f"; {view.loaded_count} loaded from a cache"
    lines.append([_("Start:"), " ", start])
    seconds = view.backend_seconds
    if seconds is not None:
        spans = [c.backend for c in view.calls if c.backend is not None]
        where = ", ".join(f"lines {s.begin_line}–{s.end_line}" for s in spans[:4])
        inductor = v._sum([p.inductor.seconds for p in pieces if p.inductor is not None])
        extra = f"; Inductor {inductor:.2f} s of it (inductor_compile spans)" if inductor else ""
        lines.append(
            [_("vLLM compile time:"), " ", f"{seconds:.2f} s (vllm_backend, {where}){extra}"]
        )
    elif view.load_seconds is not None:
        spans = [g.span for g in view.load_groups if g.span is not None]
        where = "; ".join(
            f"{s.seconds or 0.0:.2f} s from line {s.begin_line} to line {s.end_line}"
            for s in spans[:8]
        )
        what = (
            f"from the first {v.LOAD_SPAN} begin to the last end ({where})"
            if len(spans) == 1
            else f"each model's loads from the first {v.LOAD_SPAN} begin to the last end, "
            f"summed: {where}"
        )
        lines.append([_("Load time:"), " ", f"{view.load_seconds:.2f} s, {what}"])
    else:
        lines.append([_("vLLM compile time:"), " not logged (no vllm_backend span)"])
    blocks: list[Block] = [Lines(lines, classes=["torchtrace-facts"])]
    if view.ids_missing:
        ids = ", ".join(view.compile_ids[:8])
        has = f"only {ids} {'carries' if len(view.compile_ids) == 1 else 'carry'} one"
        start_said = "" if view.dynamo_start else " and the log has no dynamo_start"
        what = "load" if view.warm else "compile"
        blocks.append(
            Admonition(
                "note",
                [
                    Paragraph(
                        [
                            f"Compile ids: {has if ids else 'no record carries one'}"
                            f"{start_said}; {view.without_id} of the {view.records} records "
                            f"read here have none, every vLLM record and Inductor {what} "
                            "among them (",
                            links.no_id_page("records without a compile id"),
                            "). ",
                            AOT_TEXT.replace("compiles below", f"{what}s below"),
                        ]
                    )
                ],
            )
        )
    return [Section([_("vLLM at a glance")], blocks, anchor="vllm-at-a-glance")]


# --------------------------------------------------------------------------- one call


def _call_blocks(view: v.VllmView, call: v.Call, links: _Links, shared: set[str]) -> list[Block]:
    blocks: list[Block] = []
    if call.pieces:
        blocks.append(_matrix(view, call, links))
        blocks.append(_pieces(call, links))
    blocks += _split(call, links)
    blocks += _config(call, shared)
    blocks += _after(call, links) if call.pieces else []
    return blocks


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"


def _matrix(view: v.VllmView, call: v.Call, links: _Links) -> Section:
    m = view.matrix(call)
    slowest = m.slowest
    rows: list[list[Inlines]] = []
    for rng in m.ranges:
        head: list[Inline] = [v.range_text(rng)]
        within = m.containing(rng)
        if within is not None:
            head.append(f" (⊂ {v.range_text(within)}, used instead of it for this size)")
        row: list[Inlines] = [head]
        for submod in m.submods:
            row.append(_cell(m.cell(rng, submod), slowest, links))
        row.append([_total(m.row_seconds(rng), m.row_inductor(rng))])
        rows.append(row)
    totals: list[Inlines] = [[Strong("Total")]]
    totals += [[_total(m.column_seconds(s), m.column_inductor(s))] for s in m.submods]
    totals.append([Strong(_total(m.total_seconds, m.total_inductor))])
    rows.append(totals)
    header = ["Range or size", *m.submods, "Total"]
    intro: list[Inline] = [
        "Each cell: the piece's wall time (from its compile start to the next one; the last "
        "to the end of vllm_backend), Inductor's time (its inductor_compile span), its cache "
        "lookups, the kernels Inductor generated, and the line of its compile start; the "
        "time links its output code."
    ]
    if slowest is not None and slowest.wall_seconds is not None:
        share = ""
        if m.total_seconds:
            share = f", {100 * slowest.wall_seconds / m.total_seconds:.0f}% of the total"
        intro.append(
            f" The slowest cell is {slowest.label} ({slowest.wall_seconds:.2f} s{share}, "
            f"line {slowest.line})."
        )
        if slowest is call.pieces[0]:
            intro.append(
                " It is the first compile of the call: it also pays the compiler's start "
                "(not measured apart in the log)."
            )
    blocks: list[Block] = [Paragraph(intro), Table(header, rows, classes=["torchtrace-vllm"])]
    reused = [p for p in call.pieces if p.reused]
    if reused:
        blocks.append(_reuse(call, reused))
    blocks.append(Paragraph([STDOUT_TEXT]))
    return Section([_("Ranges and sizes × subgraphs")], blocks, anchor="vllm-matrix")


def _cell(pieces: Sequence[v.Piece], slowest: v.Piece | None, links: _Links) -> list[Inline]:
    if not pieces:
        return ["—"]
    out: list[Inline] = []
    for i, p in enumerate(pieces):
        if i:
            out.append("; again: ")
        if p.reused:
            source = f", probably {p.source.submod}'s" if p.source is not None else ""
            out.append(f"reused{source} (line {p.line})")
            continue
        wall = _seconds(p.wall_seconds)
        out.append(links.record(p.output_code, wall) if p.output_code is not None else wall)
        if p is slowest:
            out += [" ", Strong("slowest")]
        parts = []
        if p.inductor is not None and p.inductor.seconds is not None:
            parts.append(f"Inductor {p.inductor.seconds:.2f} s")
        parts.append(p.cache_text or "no cache lookup logged")
        if p.loaded:
            parts.append("loaded, not compiled")
        parts.append(f"{p.kernels} kernel{'' if p.kernels == 1 else 's'}")
        parts.append(f"line {p.line}")
        out.append(" (" + ", ".join(parts) + ")")
    return out


def _total(wall: float | None, inductor: float | None) -> str:
    text = _seconds(wall)
    return text + (f" (Inductor {inductor:.2f} s)" if inductor is not None else "")


def _reuse(call: v.Call, reused: Sequence[v.Piece]) -> Admonition:
    items: list[Inlines] = []
    for p in reused:
        line: list[Inline] = [
            f"{p.label} (compile start at line {p.line}): no compile record follows; vLLM "
            "reused an artifact it compiled earlier in this process for an identical "
            "AOTAutograd key. The log does not name that artifact."
        ]
        if p.source is not None:
            saved = p.source.wall_seconds
            dumps = [g for s in (p.source, p) if (g := call.graph_of(s.submod)) is not None]
            where = ", ".join(f"{g.name} at line {g.line}" for g in dumps)
            line.append(
                f" Probably {p.source.label}'s (compile start at line {p.source.line}): the "
                "only earlier piece of this range whose subgraph is the same graph but for "
                f"its names{f' ({where})' if where else ''}"
                + (f"; that compile took {saved:.2f} s, saved here." if saved else ".")
            )
        elif p.twins > 1:
            line.append(
                f" {p.twins} earlier pieces of this range have the same graph: which one it "
                "reused, the log does not say."
            )
        else:
            line.append(
                " No earlier piece of this range logged the same graph: which one it reused, "
                "the log does not say."
            )
        items.append(line)
    return Admonition("note", [Lines(items)])


def _pieces(call: v.Call, links: _Links) -> Dropdown:
    rows: list[list[Inlines]] = []
    for p in call.pieces[:ROWS]:
        wall = _seconds(p.wall_seconds)
        if p.marker is not None and p.wall_end_line is not None:
            wall += f" (lines {p.marker.begin_line}–{p.wall_end_line})"
        inductor = "—"
        if p.inductor is not None and p.inductor.seconds is not None:
            s = p.inductor
            inductor = f"{s.seconds:.2f} s (lines {s.begin_line}–{s.end_line})"
        code: list[Inline] = ["—"]
        if p.output_code is not None:
            code = [links.record(p.output_code, v.code_file(p.output_code) or "output code")]
            code.append(f" (line {p.output_code.line})")
        graph: list[Inline] = [links.record(p.graph, p.graph.name)] if p.graph else []
        other = ", ".join(f"{k}={_cut(val)}" for k, val in p.other_fields.items())
        flags = []
        if p.capture_size:
            flags.append("is_cudagraph_capture_size")
        rows.append(
            [
                [str(p.line)],
                [Code(p.submod), *([" ", *graph] if graph else [])],
                [v.range_text(p.range, p.single_size)],
                [wall],
                [inductor],
                [p.cache_text or ("reused" if p.reused else "—")],
                [str(p.kernels), f" (+{p.extern_calls} library calls)" if p.extern_calls else ""],
                code,
                [", ".join(flags + ([other] if other else [])) or "—"],
            ]
        )
    header = [
        "Line",
        "Subgraph",
        "Range",
        "Wall",
        "Inductor",
        "Cache",
        "Kernels",
        "Output code",
        "Other fields",
    ]
    more = len(call.pieces) - ROWS
    blocks: list[Block] = [*capped_table(header, rows, where="the log")]
    if more > 0:
        blocks.append(Paragraph([f"{more} more piecewise compiles are in the log."]))
    return Dropdown(["Piecewise compiles in log order"], blocks, anchor="vllm-pieces")


# --------------------------------------------------------------------------- split


def _split(call: v.Call, links: _Links) -> list[Block]:
    if call.split is None and not call.split_ops:
        return []
    ops = call.split_ops
    source = call.split_ops_from
    if not ops:
        ops = v.split_graph_ops(call)
        source = call.split if ops else None
    chain: list[Inlines] = []
    for submod in call.submods:
        if submod in ops:
            chain.append([f"[{submod}: {', '.join(ops[submod]) or 'no op call found'}]"])
        else:
            chain.append([Code(submod)])
    blocks: list[Block] = []
    if chain:
        where: list[Inline] = []
        if call.split is not None:
            where = [" (", links.record(call.split, "split graph"), f", line {call.split.line})"]
        blocks.append(Paragraph(["The graph as vLLM split it", *where, ": "]))
        blocks.append(Paragraph(joined(chain, " → ")))
    if source is not None:
        blocks.append(
            Paragraph(
                [
                    "The ops that split it, read from ",
                    links.record(source, source.name),
                    f" (line {source.line}): ",
                    *joined([[Code(op)] for op in call.split_op_names or _ops_of(ops)]),
                    ".",
                ]
            )
        )
    elif call.split is not None:
        blocks.append(Paragraph(["No execution code was logged: the ops that split it are not."]))
    candidates = call.candidates
    if candidates:
        used = [op for op in _ops_of(ops) if call.op_is_candidate(op)]
        other = [op for op in _ops_of(ops) if not call.op_is_candidate(op)]
        text = (
            f"The config lists {len(candidates)} candidate splitting ops; "
            f"{len(used)} of them split this graph."
        )
        if other:
            text += f" Not among the candidates: {', '.join(other)}."
        blocks.append(
            Dropdown(
                [text],
                [Lines([[Code(_cut(c))] for c in candidates[:ROWS]])],
                anchor="vllm-candidates",
            )
        )
    return [Section([_("Where the graph is split")], blocks, anchor="vllm-split")]


def _ops_of(ops: dict[str, list[str]]) -> list[str]:
    seen: dict[str, None] = {}
    for names in ops.values():
        for op in names:
            seen.setdefault(op)
    return list(seen)


# --------------------------------------------------------------------------- config


def _config(call: v.Call, shared: set[str] | None = None) -> list[Block]:
    if call.config is None:
        return []
    settings = call.settings
    shared = shared or set()
    rows: list[list[Inlines]] = []
    for key in v.SHAPING_FIELDS:
        if key in settings and key not in shared:
            rows.append([[Code(key)], _shown(call, key), [_note(call, key)]])
    said = (
        f"; the {len(shared)} fields every compile call logged alike are shown once, above"
        if shared
        else ""
    )
    blocks: list[Block] = [
        Paragraph(
            [
                f"What shapes compilation, from vllm_compilation_config (line "
                f"{call.config.line}); lists are as vLLM joins them, with commas{said}."
            ]
        ),
    ]
    if rows:
        blocks.append(Table(["Field", "Value", "What it means here"], rows))
    if "cudagraph_capture_sizes" not in settings:
        blocks.append(
            Paragraph(
                ["CUDA graph capture sizes are not logged: the config has only cudagraph_mode."]
            )
        )
    capture = [p for p in call.pieces if p.capture_size]
    if capture and str(settings.get("cudagraph_mode", "")).upper().endswith("NONE"):
        sizes = ", ".join(sorted({v.range_text(p.range, True) for p in capture}))
        blocks.append(
            Admonition(
                "warning",
                [
                    Paragraph(
                        [
                            f"vLLM marks {sizes} is_cudagraph_capture_size (line "
                            f"{capture[0].line}) although cudagraph_mode is NONE: no CUDA "
                            "graph is captured; it is a compile size."
                        ]
                    )
                ],
            )
        )
    rest = [k for k in settings if k not in v.SHAPING_FIELDS and k not in shared]
    if rest:
        other: list[list[Inlines]] = [[[Code(_cut(k))], _shown(call, k)] for k in rest[:ROWS]]
        blocks.append(
            Dropdown(
                [f"The other {len(rest)} fields, as logged"],
                [Table(["Field", "Value"], other)],
                anchor="vllm-config-other",
            )
        )
    return [Section([_("Config that shapes compilation")], blocks, anchor="vllm-config")]


def _shown(call: v.Call, key: str) -> list[Inline]:
    return _shown_value(key, call.settings.get(key))


def _shown_value(key: str, value: Any) -> list[Inline]:
    if key in v.LIST_FIELDS:
        items = v.as_list(value)
        if not items:
            return ["(empty)"]
        shown = ", ".join(items[:50]) + (f" … ({len(items) - 50} more)" if len(items) > 50 else "")
        return [Code(_cut(shown))]
    return [Code(_value(value))]


def _note(call: v.Call, key: str) -> str:
    if key in ("compile_ranges_endpoints", "compile_ranges_split_points"):
        ends = [e for e in (v._int(x) for x in call.listed(key)) if e is not None]
        if not ends:
            return ""
        ranges, low = [], 1
        for end in sorted(ends):
            ranges.append(f"[{low}, {end}]")
            low = end + 1
        logged = sorted(
            {v.range_text(p.range) for p in call.pieces if p.range and not p.single_size}
        )
        text = f"ranges {', '.join(ranges)}; the last endpoint is max_num_batched_tokens"
        return text + (f" (compiled: {', '.join(logged)})" if logged else "")
    if key == "compile_sizes":
        sizes = sorted({p.range[0] for p in call.pieces if p.range and p.single_size})
        return f"compiled for sizes {', '.join(map(str, sizes))}" if sizes else ""
    if key == "mode":
        return call.mode or ""
    return ""


# --------------------------------------------------------------------------- after


def _after(call: v.Call, links: _Links) -> list[Block]:
    if not call.after:
        return []
    rows: list[list[Inlines]] = []
    for record in call.after[:ROWS]:
        if isinstance(record, Metrics):
            rows.append([[str(record.line)], [Code(record.event)], [_metrics_text(record)]])
        else:
            rows.append([[str(record.line)], [links.record(record, record.name)], [""]])
    intro = Paragraph(
        [
            "Logged after the last piecewise compile: these belong to the compile call, not "
            "to its last subgraph."
        ]
    )
    return [
        Section(
            [_("After the piecewise compiles")],
            [intro, Table(["Line", "Record", "Figures"], rows)],
            anchor="vllm-after",
        )
    ]


def _metrics_text(m: Metrics) -> str:
    keys = (
        "compile_id",
        "backend_compile_time_s",
        "inductor_compile_time_s",
        "code_gen_time_s",
        "aotautograd_local_cache_miss_count",
    )
    parts = [f"{k}={_cut(m.data[k])}" for k in keys if k in m.data]
    return ", ".join(parts)


# --------------------------------------------------------------------------- loads


def _loads(view: v.VllmView, links: _Links) -> list[Block]:
    if not view.loads:
        return []
    intro: list[Inline] = [
        f"{len(view.loads)} pieces loaded from a cache (an output code and its cache records "
        "each, no compile start before them)."
    ]
    groups = view.load_groups
    if len(groups) > 1:
        intro.append(
            f" They are {len(groups)} models' loads: each model loads its pieces, then vLLM "
            "logs its execution code."
        )
    intro.append(
        " A load does not say which subgraph or range it is: the cold log's page names the "
        "same output code files in its piecewise compiles, and a comparison of the two logs "
        "maps each load to its cell."
    )
    blocks: list[Block] = [Paragraph(intro)]
    for i, group in enumerate(groups):
        said: list[Inline] = []
        if len(groups) > 1:
            code = group.execution_code
            where = f", vllm_execution_code at line {code.line}" if code is not None else ""
            said.append(f"Model {i + 1}{where}: {len(group.loads)} loads.")
        span = group.span
        if span is not None and span.seconds is not None:
            said.append(
                f" Loading took {span.seconds:.2f} s, from the first {v.LOAD_SPAN} begin "
                f"(line {span.begin_line}) to the last end (line {span.end_line}); the loads "
                "overlap, so no load's own time can be told."
            )
        if said:
            blocks.append(Paragraph(said))
        rows: list[list[Inlines]] = [
            [
                [str(load.line)],
                [links.record(load.output_code, load.filename or "output code")],
                [load.cache_text or "—"],
                [str(load.kernels)],
            ]
            for load in group.loads[:ROWS]
        ]
        blocks += capped_table(["Line", "Output code", "Cache", "Kernels"], rows, where="the log")
    return [Section([_("Loaded pieces")], blocks, anchor="vllm-loads")]


# --------------------------------------------------------------------------- shapes


def _symbol(view: v.VllmView) -> list[Block]:
    s = view.symbol
    if s is None:
        return []
    facts: list[Inline] = [
        "The token count is ",
        Code(s.symbol),
        ", created from ",
        Code(_cut(s.source)),
        f" (create_symbol, line {s.line})",
    ]
    if s.value_range:
        facts += [", range ", Code(s.value_range)]
    if s.hint:
        facts.append(f", hint {s.hint}")
    facts.append(".")
    if s.aliases:
        facts += [" A guard says ", *joined([[Code(a)] for a in s.aliases]), " equal it."]
    rows: list[list[Inlines]] = [
        [[str(g.line)], [Code(_cut(g.expr))], [Strong(g.verdict) if g.cuts else g.verdict]]
        for g in s.guards[:ROWS]
    ]
    blocks: list[Block] = [Paragraph(facts)]
    if rows:
        blocks.append(Table(["Line", "Guard", "Against the compile ranges"], rows))
    else:
        blocks.append(Paragraph(["No guard on it was logged."]))
    if any(g.cuts for g in s.guards):
        blocks.insert(
            0,
            Admonition(
                "warning",
                [Paragraph(["A guard on the token count excludes counts a compile range holds."])],
            ),
        )
    return [Section([_("Token count and its guards")], blocks, anchor="vllm-token-count")]


# --------------------------------------------------------------------------- unknown


def _unknown(view: v.VllmView, links: _Links) -> list[Block]:
    if not view.unknown:
        return []
    rows: list[list[Inlines]] = [
        [[str(a.line)], [links.record(a, _cut(a.name))], [a.event]] for a in view.unknown[:ROWS]
    ]
    intro = Paragraph(
        [
            f"{len(view.unknown)} vLLM records this page does not read (a newer vLLM's, or "
            "another tool's), as logged:"
        ]
    )
    return [
        Section(
            [_("Other vLLM records")],
            [intro, Table(["Line", "Record", "Kind"], rows)],
            anchor="vllm-other-records",
        )
    ]


def _value(value: Any) -> str:
    if value is None:
        return "not logged"
    return _cut(value)


def _cut(value: Any) -> str:
    text = str(value)
    return text if len(text) <= VALUE_LIMIT else text[:VALUE_LIMIT] + "…"


# --------------------------------------------------------------------------- elsewhere


def _views(plan: TracePlan) -> list[tuple[RankTrace, v.VllmView]]:
    return [(rank, view) for rank in plan.trace.ranks if (view := v.vllm_view(rank))]


def glance_line(plan: TracePlan) -> list[Inline] | None:
    """``vLLM:`` for the glance: cold or warm, the pieces, the time, a link to the page."""
    views = _views(plan)
    if not views or not plan.vllm_docname:
        return None
    compiled = sum(len(view.compiled) for _, view in views)
    reused = sum(len(view.reused) for _, view in views)
    loaded = sum(view.loaded_count for _, view in views)
    kinds = sorted({view.startup for _, view in views})
    parts = [f"{'/'.join(kinds)} start"]
    calls = sum(view.models for _, view in views)
    if calls > len(views):
        parts.append(f"{calls} compile calls")
    if compiled:
        parts.append(f"{compiled} piecewise compile{'' if compiled == 1 else 's'}")
    if reused:
        parts.append(f"{reused} reused")
    if loaded:
        parts.append(f"{loaded} piece{'' if loaded == 1 else 's'} loaded from a cache")
    line: list[Inline] = [_("vLLM:"), " ", PageLink(plan.vllm_docname, ", ".join(parts))]
    slowest = [m.slowest for _, view in views for c in view.calls if (m := view.matrix(c))]
    timed = [p for p in slowest if p is not None and p.wall_seconds is not None]
    if timed:
        p = max(timed, key=lambda p: p.wall_seconds or 0.0)
        line.append(f"; the slowest, {p.label}, took {p.wall_seconds or 0.0:.1f} s")
    return line


def compile_seconds(plan: TracePlan) -> tuple[float, str] | None:
    """vLLM's compile time over the trace's logs (its vllm_backend spans, else the loads'
    span), and what it is; None when no log states one."""
    views = _views(plan)
    backend = [s for _, view in views if (s := view.backend_seconds) is not None]
    if backend:
        return sum(backend), "vLLM's backend, its vllm_backend span"
    loads = [s for _, view in views if (s := view.load_seconds) is not None]
    return (sum(loads), "loading vLLM's cached pieces") if loads else None


def capture_note(plan: TracePlan, compile_: Compile) -> Paragraph | None:
    """On the page of a compile whose Dynamo capture vLLM split and compiled piecewise:
    what its records show, instead of a generic status ("missing": its metrics were
    logged after vLLM's pieces, without a compile id)."""
    rank = next((r for r in plan.trace.ranks if compile_ in r.compiles), None)
    call = v.captured_call(rank, compile_) if rank is not None else None
    view = v.vllm_view(rank) if rank is not None else None
    if rank is None or call is None or view is None or not plan.vllm_docname:
        return None
    links = _Links(plan, rank)
    graph = max(
        (a for a in compile_.artifacts if a.event == "dynamo_output_graph"),
        key=lambda a: a.line,
    )
    label = f" ({view.call_label(call)})" if len(view.shown_calls) > 1 else ""
    content: list[Inline] = [
        Strong("Dynamo's capture for vLLM's compile" + label + ":"),
        " Dynamo traced this graph (",
        links.record(graph, "dynamo_output_graph"),
        f", line {graph.line}); vLLM",
    ]
    if call.split is not None:
        content += [
            " split it (",
            links.record(call.split, call.split.name),
            f", line {call.split.line}) and",
        ]
    content.append(f" {_pieces_said(call)} (")
    content += [PageLink(plan.vllm_docname, "the vLLM page"), ")."]
    own = {id(m) for m in compile_.metrics}
    metrics = [m for m in call.compile_metrics if id(m) not in own]
    if not compile_.compilation_metrics and metrics:
        content += [
            f" Its compilation metrics follow those compiles without a compile id "
            f"({metrics[0].event}, line {metrics[0].line}, on ",
            links.no_id_page("the page of records without a compile id"),
            "): vLLM's ahead-of-time compile runs its backend outside Dynamo's compile "
            "context, so this compile id has no metrics of its own; it is not missing.",
        ]
    elif not compile_.compilation_metrics:
        content.append(f" {STATUS_MISSING}")
    return Paragraph(content)


#: What is left of the generic "missing" when no metrics follow vLLM's compiles either.
STATUS_MISSING = "No compilation metrics were logged for it or after vLLM's compiles."


def _pieces_said(call: v.Call) -> str:
    """``compiled it piecewise: 9 piecewise compiles of 3 subgraphs, 6 reused``."""
    kinds = [p.kind for p in call.pieces]
    compiled, loaded, reused = (kinds.count(k) for k in ("compiled", "loaded", "reused"))
    if not call.pieces:
        return "logged no piecewise compile start for it"
    subgraphs = len({p.submod for p in call.pieces})
    text = (
        f"compiled it piecewise: {len(call.pieces)} compile start"
        f"{'' if len(call.pieces) == 1 else 's'} over {subgraphs} subgraph"
        f"{'' if subgraphs == 1 else 's'}, {compiled} compiled"
    )
    if loaded:
        text += f", {loaded} loaded from a cache (cache hits only)"
    return text + (f", {reused} reused in-process (no compile record)" if reused else "")


def unknown_page_note(plan: TracePlan, compile_: Compile) -> Paragraph | None:
    """On the page of records without a compile id, when vLLM's compiles are among them:
    what they are, instead of "not a compile of its own"."""
    rank = next((r for r in plan.trace.ranks if compile_ in r.compiles), None)
    view = v.vllm_view(rank) if rank is not None else None
    if view is None or not view.ids_missing or not plan.vllm_docname:
        return None
    calls = [c for c in view.shown_calls if c.pieces]
    if len(calls) > 1:
        what = f"{len(calls)} compile calls: " + "; ".join(
            f"{view.call_label(c)}: {_pieces_said(c).split(': ', 1)[-1]}" for c in calls
        )
    elif calls:
        what = _pieces_said(calls[0]).split(": ", 1)[-1]
    else:
        groups = len(view.load_groups)
        what = f"{len(view.loads)} pieces loaded from a cache" + (
            f" by {groups} models" if groups > 1 else ""
        )
    return Paragraph(
        [
            f"These records hold vLLM's compile, logged without a compile id ({what}): "
            "vLLM's ahead-of-time compile runs its backend outside Dynamo's compile context. ",
            PageLink(plan.vllm_docname, "The vLLM page"),
            " shows them by subgraph and compile range.",
        ]
    )


def cells_blocks(change: VllmChange, baseline: str, new: str) -> list[Block]:
    """For a comparison of a cold run with a warm one: each cold piece and the warm run's
    load of it (found by its output code file: no load names its subgraph or range)."""
    if not change.cells:
        return []
    cold, warm = (baseline, new) if change.cold_run == "baseline" else (new, baseline)
    several = len({c["call"] for c in change.cells}) > 1
    rows: list[list[Inlines]] = []
    for cell in change.cells[:ROWS]:
        wall = cell["cold_wall_seconds"]
        took = f", {wall:.2f} s" if isinstance(wall, float) else ""
        cold_text = f"line {cell['cold_line']}{took}"
        if cell["reused"]:
            via = cell["via_line"]
            cold_text = f"line {cell['cold_line']}: reused" + (
                f", probably the piece at line {via}"
                if via is not None
                else ", from which piece the log does not say"
            )
        warm_line = cell["warm_line"]
        if warm_line is None:
            loaded: list[Inline] = ["no load of its output code"]
        else:
            what = "the output code of its source" if cell["reused"] else "its output code"
            loaded = [f"line {warm_line} ({what} ", Code(_cut(cell["output_code"])), ")"]
        row: list[Inlines] = [[_cut(cell["call"])]] if several else []
        row += [[Code(_cut(cell["subgraph"]))], [_cut(cell["range"])], [cold_text], loaded]
        rows.append(row)
    header = ["Call"] if several else []
    header += ["Subgraph", "Range or size", f"{cold} (cold)", f"{warm}: load"]
    found = sum(1 for c in change.cells if c["warm_line"] is not None)
    intro = Paragraph(
        [
            f"Each piece {cold} compiled or reused, and the load of it in {warm}: a load is "
            f"found by its output code file name, which both logs give; {found} of the "
            f"{len(change.cells)} cells were found."
        ]
    )
    return [intro, *capped_table(header, rows, where="the logs")]
