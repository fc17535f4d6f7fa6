"""The page of one compile: what was compiled, how it went, and why.

The reader arrives from the overview or from a recompile and wants, in order: the
outcome, the facts, why it compiled again, what failed, where it was compiled from,
the metrics, and every artifact in pipeline order.  Trace text goes into blocks as
plain text; nothing here writes markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from ...trace import Artifact, Compile, Failure, Metrics, StackFrame
from ...trace.analyses import compare
from ...trace.analyses import summary as trace_summary
from ...trace.analyses.graph_breaks import BreakMessage, failure_places, named_place, parse_message
from ...trace.analyses.outcome import failure_outcome, refusal
from ...trace.analyses.provenance import provenance_views
from ...trace.analyses.status import attempts_status
from ...trace.analyses.timings import MAX_SECONDS, plausible
from ..artifacts import (
    GUARD_ARTIFACTS,
    INLINE_LIMIT,
    abridged_record,
    json_text,
    language_of,
    pipeline_position,
    shown_record,
    size_text,
)
from ..blocks import (
    AnchorLink,
    Badge,
    Block,
    BulletList,
    Code,
    CodeBlock,
    Download,
    Dropdown,
    Inline,
    Inlines,
    Lines,
    Link,
    ObjectLink,
    ObjectTarget,
    Page,
    PageLink,
    Paragraph,
    Provenance,
    Section,
    Strong,
    Tab,
    Table,
    TabSet,
    Toctree,
    WebOnly,
    joined,
    linked,
    place_link,
)
from ..naming import shown_name
from ..outcome_words import OUTCOME_WORDS, REFUSAL_WORDS, because
from ..plan import TITLE_SEPARATOR, FramePlan, GraphPlan, KernelPlan, PageSettings, TracePlan
from ..rank_sharing import SET_ASIDE
from ..source import maybe_strip
from ..statuses import STATUS_MEANING
from ..words import _
from . import runtime
from .cudagraphs import cudagraphs_section, text_log_section
from .diffs import folded_diff, sizes_diff, sizes_only_blocks, whole_text
from .graph import inline_graph
from .kernel import code_link, graph_nodes_of, inline_kernel
from .regions import regions_section
from .vllm import unknown_page_note
from .workers import workers_section

UNKNOWN_COMPILE_TEXT = (
    "Records logged outside any compilation (the PyTorch version, ahead-of-time compilation, "
    "and the like); not a compile of its own."
)
RESTARTED_TEXT = "This attempt was restarted: the next attempt carries on from where it stopped."

METRICS_TITLES: dict[str, str] = {
    "compilation_metrics": "Forward",
    "bwd_compilation_metrics": "Backward",
    "aot_autograd_backward_compilation_metrics": "AOT backward",
    "compilation_metrics_runtime": "Runtime",
    "bwd_compilation_metrics_runtime": "Runtime backward",
}

#: The metric fields a reader looks for, in the order shown, with their labels.
METRIC_LABELS: dict[str, str] = {
    "entire_frame_compile_time_s": "Entire frame compile time",
    "dynamo_time_before_restart_s": "Dynamo time before restart",
    "backend_compile_time_s": "Backend compile time",
    "inductor_compile_time_s": "Inductor compile time",
    "code_gen_time_s": "Code generation time",
    "elapsed_time": "Elapsed time",
    "duration_us": "Duration",
    "triton_compile_time_us": "Triton compile time",
    "compile_time_autotune_time_us": "Autotuning at compile time",
    "runtime_triton_autotune_time_us": "Triton autotuning at run time",
    "runtime_cudagraphify_time_us": "CUDA graph capture at run time",
    "remote_cache_time_saved_s": "Time saved by the remote cache",
    "graph_op_count": "Graph operators",
    "graph_node_count": "Graph nodes",
    "graph_input_count": "Graph inputs",
    "guard_count": "Guards",
    "shape_env_guard_count": "Shape guards",
    "cache_size": "Cache entries of this frame",
    "accumulated_cache_size": "Cache entries, all frames of this code",
    "num_graph_breaks": "",  # torch counts on over the process: not this compile's breaks
    "has_guarded_code": "Has guarded code",
    "inductor_fx_local_cache_hit_count": "FX graph cache hits (local)",
    "inductor_fx_local_cache_miss_count": "FX graph cache misses (local)",
    "inductor_fx_remote_cache_hit_count": "FX graph cache hits (remote)",
    "inductor_fx_remote_cache_miss_count": "FX graph cache misses (remote)",
    "aotautograd_local_cache_hit_count": "AOT Autograd cache hits (local)",
    "aotautograd_local_cache_miss_count": "AOT Autograd cache misses (local)",
    "cudagraph_skip_reason": "CUDA graphs skipped because",
    "restart_reasons": "Restart reasons",
    "non_compliant_ops": "Non-compliant operators",
    "compliant_custom_ops": "Compliant custom operators",
    "fail_type": "Failure type",
    "fail_user_frame_filename": "Failed in file",
    "fail_user_frame_lineno": "Failed at line",
}

#: Metrics named after GPU work: glossed only for a compile that made a Triton kernel.
GPU_METRICS = frozenset(
    {
        "triton_compile_time_us",
        "runtime_triton_autotune_time_us",
        "runtime_cudagraphify_time_us",
        "cudagraph_skip_reason",
    }
)
#: Metrics named after a remote cache: glossed only where the run logged one.
REMOTE_CACHE_METRICS = frozenset(
    {
        "remote_cache_time_saved_s",
        "inductor_fx_remote_cache_hit_count",
        "inductor_fx_remote_cache_miss_count",
    }
)

#: Counts worth showing even at zero; other fields are left out when zero.
ZERO_MEANS_SOMETHING = frozenset(
    {
        "graph_op_count",
        "graph_node_count",
        "graph_input_count",
        "guard_count",
        "shape_env_guard_count",
        "cache_size",
        "accumulated_cache_size",
    }
)

FAILURE_TITLES: dict[str, str] = {
    "failure": "Failure",
    "restart": "Restart",
    "graph_break": "Graph break",
}

#: Inline values (metrics, cells) are cut to this many characters: they sit in table cells.
VALUE_LIMIT = 300
#: A number no compile could have logged (infinite, 400 digits) is shown as text, this long.
ODD_NUMBER_LIMIT = 40
#: Counts at or past this are corrupt records, not graph sizes: left out of the facts.
MAX_COUNT = 10**15
CELL_LIMIT = 200
SOURCE_NODES_LIMIT = 120
#: Call lines an extern kernel's row names before "and N more".
EXTERN_LINES = 5

#: Artifacts named after their phase only when a forward and a backward of that name exist.
NOT_PHASED = frozenset(
    {"aot_joint_graph", "aot_forward_graph", "aot_backward_graph", "dynamo_output_graph"}
)

ARTIFACTS_TEXT = (
    "In pipeline order: Dynamo's graph, AOT Autograd's graphs, Inductor's graphs before and "
    "after its passes, then the generated code. Each name links to where it is shown: folded "
    "below the table, or, for a large graph, on a page of its own; an artifact too large to "
    "show is offered raw."
)
PROVENANCE_TEXT = (
    "The pre-grad graph, the post-grad graph and the generated code side by side: hover or "
    "click a line to see where it came from and what it became; in a pane, the arrow keys "
    "step through the linked lines."
)


@dataclass(frozen=True)
class _Frame:
    """What every part of the page reads: the frame, its neighbours and the settings."""

    plan: TracePlan
    frame: FramePlan
    settings: PageSettings
    previous: Compile | None

    @property
    def compile(self) -> Compile:
        return self.frame.compile

    def strip(self, text: str) -> str:
        return maybe_strip(text, self.settings.no_source)

    def anchor_link(self, anchor: str, text: str) -> AnchorLink:
        return AnchorLink(self.frame.docname, anchor, text)

    def frame_link(self, compile_: Compile) -> Inline:
        """A link to another compile's page; its label where the plan has no page for it."""
        other = self.plan.frame_for(compile_)
        return ObjectLink("frame", other.name) if other is not None else Code(compile_.label)


def frame_page(plan: TracePlan, frame: FramePlan, settings: PageSettings) -> Page:
    """The page of one compile (one attempt or occurrence of a compile id)."""
    c = frame.compile
    view = _Frame(plan, frame, settings, compare.previous_compile(frame.rank, c))
    fn_name, fn_where = _function_of(view)
    blocks: list[Block] = [
        *(ObjectTarget("frame", name, status) for name, status in plan.frame_objects(frame)),
        *_neighbour_links(view),
        _status_paragraph(view),
        _facts(view, fn_name, fn_where),
    ]
    # Short answers first (failure headlines, figures, what was made), long blocks after.
    for section in (
        text_log_section(view.frame.rank),
        _failures_section(view),
        _across_ranks_section(view),
        _changed_section(view),  # the answers (what failed, why it compiled again) first
        _metrics_section(view),
        runtime.frame_section(plan, frame),
        cudagraphs_section(c),
        _artifacts_section(view),
        regions_section(plan, frame),
        workers_section(plan, frame),
        _kernels_section(view),
        _provenance_section(view),
        _stack_section(view),
        _shapes_section(view),
        _cache_section(view),
    ):
        if section is not None:
            blocks.append(section)
    blocks.extend(_neighbour_links(view))
    if settings.detail_toctree and (frame.graphs or frame.kernels):
        # Graph and kernel pages are orphans in HTML (a light sidebar); builders that
        # assemble one document (LaTeX, singlehtml) need them in a toctree.
        docnames = [g.docname for g in frame.graphs if g.has_page]
        docnames += [k.docname for k in frame.kernels if k.has_page]
        blocks.append(Toctree(docnames, hidden=True))
    title = plan.frame_title(frame, trace_summary.function_label(frame.rank, c))
    # [-/-] is no compilation: linked from the overview, in a toctree only where one
    # document holds every page (LaTeX)
    listed = plan.in_sidebar(frame, settings.sidebar_limit)
    orphan = not listed and not (c.id.is_unknown and settings.detail_toctree)
    return Page(frame.docname, [title], blocks, orphan=orphan)


def _neighbour_links(view: _Frame) -> list[Block]:
    """Previous and next frame pages in compile order, and the way back to the overview."""
    before, after = view.plan.neighbours(view.frame)
    parts: list[Inline] = [PageLink(view.plan.index_docname, f"{view.plan.label} overview")]
    if before is not None:
        parts += [" · previous: ", PageLink(before.docname, _short_title(view.plan, before))]
    if after is not None:
        parts += [" · next: ", PageLink(after.docname, _short_title(view.plan, after))]
    return [Lines([parts], classes=["torchtrace-prev-next"])]


def _short_title(plan: TracePlan, frame: FramePlan) -> str:
    """A neighbour as its sidebar names it, without the trace's label (the page has it)."""
    return plan.frame_title(frame, trace_summary.function_label(frame.rank, frame.compile)).split(
        TITLE_SEPARATOR, 1
    )[-1]


# -- header -----------------------------------------------------------------------------------


def _attempts(view: _Frame) -> list[FramePlan]:
    """Every attempt of this compile id in this occurrence, this one included, in log order."""
    return view.plan.attempts_of(view.frame)  # an index: a scan per page is quadratic


def _function_of(view: _Frame) -> tuple[str | None, Inline | None]:
    """The function compiled and where it is defined, as the directory names it
    (:func:`.summary.compiled_function`: a compile that failed early logs no code name)."""
    name, place = trace_summary.compiled_function(view.frame.rank, view.compile)
    return name, (Code(place) if place else None)


def _attempt_badge(plan: TracePlan, frame: FramePlan, text: str) -> Inline:
    """This attempt's own status: the frame's badge where that is what it shows."""
    if plan.badge_status(frame) == frame.compile.status:
        return ObjectLink("frame", frame.name, text)
    return Badge(frame.compile.status)  # ``[x/y]`` shows all attempts, attempt 0 differs


def _attempt_link(plan: TracePlan, frame: FramePlan) -> list[Inline]:
    """Another attempt, with its own status (``[x/y]``'s badge is over all attempts)."""
    if plan.badge_status(frame) == frame.compile.status:
        return [ObjectLink("frame", frame.name)]
    return [PageLink(frame.docname, frame.compile.label), " ", Badge(frame.compile.status)]


def _whole_frame_status(view: _Frame) -> list[Inline]:
    """Where this attempt's status is not the frame's: the frame's, as tlparse shows it."""
    c = view.compile
    whole = attempts_status(view.frame.rank, c)
    if len(_attempts(view)) < 2 or whole == c.status:
        return []
    return [" Over all its attempts, ", Code(str(c.id.frame)), " is ", Badge(whole), "."]


def _status_paragraph(view: _Frame) -> Paragraph:
    c = view.compile
    if c.id.is_unknown and (held := unknown_page_note(view.plan, c)) is not None:
        return held  # vLLM's compiles, logged without a compile id
    text = UNKNOWN_COMPILE_TEXT if c.id.is_unknown else STATUS_MEANING.get(c.status, "")
    content: list[Inline] = [_attempt_badge(view.plan, view.frame, c.status), f" {text}"]
    if c.restarted:
        content.append(f" {RESTARTED_TEXT}")
    content += _whole_frame_status(view)
    content += _outcome(view)
    kind = refusal(c)
    if kind is not None:
        words = REFUSAL_WORDS[kind]
        content.append(f" No version was made: {words[:1].lower()}{words[1:]}.")
    breaks = sum(f.kind == "graph_break" for f in c.failures)
    if c.status == "ok" and breaks:
        content += [
            f" It logged {breaks} graph break{'s' if breaks > 1 else ''} that torch resumed "
            "from without a restart (",
            view.anchor_link("failures", "below"),
            "): the frame is split there, and the code at the break runs in Python.",
        ]
    return Paragraph(content)


def _outcome(view: _Frame) -> list[Inline]:
    """What followed a failure, in the log's terms, and the record that shows it."""
    found = failure_outcome(view.compile)
    if found is None:
        return []
    fields = f"{', '.join(found.fields)} in " if found.fields else ""
    record = f"{found.record}, " if found.record != "failure" else ""
    where = f"{record}line {found.line} of the log"
    anchor = "metrics" if found.record in METRICS_TITLES else "failures"
    return [
        " ",
        Strong(OUTCOME_WORDS[found.outcome].capitalize() + ":"),
        f" {because(found)} (",
        f"{fields}",
        view.anchor_link(anchor, where),
        ")",
    ]


def _facts(view: _Frame, fn_name: str | None, fn_where: Inline | None) -> Lines:
    """The compile at a glance, one ``Label: value`` line per fact it has."""
    c, frame = view.compile, view.frame
    facts: list[tuple[str, Inlines]] = []
    if fn_name or fn_where:
        where: list[Inline] = [" in ", fn_where] if fn_where else []
        source = trace_summary.function_source(frame.rank, c)
        if source is not None and source is not c:  # say whose record names it
            where += [
                " (named by the metrics of ",
                view.frame_link(source),
                "; this compile's metrics name no function)",
            ]
        elif source is None and c.stack:
            where += [" (from the stack logged when it started)"]
        facts.append(("Function", [Code(fn_name or "?"), *where]))
    rank = f", rank {frame.rank.rank}" if view.plan.trace.is_multi_rank else ""
    trace_link = PageLink(view.plan.index_docname, view.plan.label)
    facts.append(("Trace", [trace_link, f"{rank}, from line {c.first_line} of the log"]))
    attempts = _attempts(view)
    if len(attempts) > 1:
        marks: list[Inlines] = [
            [Strong(f.compile.label)] if f is frame else _attempt_link(view.plan, f)
            for f in attempts
        ]
        facts.append(("Attempts", joined(marks, " → ")))
    if view.previous is not None:
        what_changed = view.anchor_link("changed", "what changed")
        made = compare.made_version(frame.rank, frame.rank.first_attempt(view.previous))
        facts.append(
            (
                "Compiled before" if made else "Compile before",
                [
                    view.frame_link(view.previous),
                    *([] if made else [_no_version(view.previous)]),
                    " (",
                    what_changed,
                    ")",
                ],
            )
        )
    next_ = compare.next_compile(frame.rank, c)
    if next_ is not None:
        made = compare.made_version(frame.rank, frame.rank.first_attempt(next_))
        facts.append(
            (
                "Compiled again" if made else "Next compile",
                [view.frame_link(next_), *([] if made else [_no_version(next_)])],
            )
        )
    facts += _metric_facts(view)
    if c.cache_events:
        facts.append(("Caches", [", ".join(f"{ev.cache} {ev.result}" for ev in c.cache_events)]))
    if frame.kernels:
        facts.append(("Kernels", [view.anchor_link("kernels", str(len(frame.kernels)))]))
    facts.append(("Chromium events", [str(c.chromium_event_count)]))
    return Lines([[f"{label}: ", *value] for label, value in facts], classes=["torchtrace-facts"])


def _no_version(compile_: Compile) -> str:
    """Beside a neighbour that made no version: refused, or failed."""
    return " (refused: no version made)" if compare.is_refused(compile_) else " (no version made)"


def _metric_facts(view: _Frame) -> list[tuple[str, Inlines]]:
    """Compile time, graph size and guards, from the first compilation-metrics record."""
    c = view.compile
    m = c.compilation_metrics[0].data if c.compilation_metrics else {}
    facts: list[tuple[str, Inlines]] = []
    total, backend = m.get("entire_frame_compile_time_s"), m.get("backend_compile_time_s")
    if plausible(total) is not None:
        backend_text = f" (backend {_seconds(backend)})" if plausible(backend) is not None else ""
        facts.append(("Compile time", [_seconds(total) + backend_text]))
    graph = _counts(
        [
            (m.get("graph_op_count"), "operator"),
            (m.get("graph_node_count"), "node"),
            (m.get("graph_input_count"), "input"),
        ]
    )
    if graph:
        facts.append(("Graph", [graph]))
    guards = _counts(
        [(m.get("guard_count"), "guard"), (m.get("shape_env_guard_count"), "shape guard")]
    )
    guard_pages = [g for g in view.frame.graphs if g.artifact.name in GUARD_ARTIFACTS]
    if guard_pages or guards:
        links: list[Inlines] = [
            [place_link(g.docname, g.anchor, g.artifact.name)]
            if g.shown
            else [view.anchor_link(_artifact_anchor(g.artifact), g.artifact.name)]
            for g in guard_pages
        ]
        facts.append(("Guards", [guards or "see", *([": ", *joined(links)] if links else [])]))
    return facts


def _counts(pairs: Sequence[tuple[object, str]]) -> str:
    """``3 operators, 1 node``: the counts a record has, each with its noun."""
    return ", ".join(f"{n} {noun}{'' if n == 1 else 's'}" for n, noun in pairs if _is_count(n))


# -- why it compiled again ----------------------------------------------------------------------


def _changed_section(view: _Frame) -> Section | None:
    c, previous = view.compile, view.previous
    if previous is None and not compare.logged_reasons(c):
        return None
    blocks: list[Block] = []
    if previous is not None:
        blocks += _previous_blocks(view, previous)
    entries = compare.recompile_reason_entries(c)
    unnamed = previous is None or compare.failed_guard(c, previous) is None
    if len(entries) > 1 or (entries and unnamed):
        blocks.append(
            Paragraph(
                [
                    "Dynamo tried every cached entry of this frame, most recent first, "
                    + (
                        "and none fit: for each, the guard that failed, or the value of a "
                        "guard torch could not read (no check failed there)"
                        if any(trace_summary.guard_kind(r) == "guard_raised" for _, r in entries)
                        else "and each had a failing guard"
                    ),
                    _reasons_record(c),
                    ":",
                ]
            )
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
        blocks.append(BulletList(items))
    if previous is not None:
        blocks += _diff_blocks(view, previous)
    refused = compare.is_refused(c)
    title = _("Why it was asked for a new version") if refused else _("Why it compiled again")
    return Section([title], blocks, anchor="changed")


def _reasons_record(compile_: Compile) -> str:
    """`` (recompile_reasons, line 3210 of the log)``: the record the guards are read from
    (a ``RecompileError``'s own ``fail_reason`` lists them where torch raised it instead)."""
    found = compare.reasons_record(compile_)
    return f" ({found[0]}, line {found[1]} of the log)" if found else ""


def _previous_blocks(view: _Frame, previous: Compile) -> list[Block]:
    """What made the compile before this one unusable: a cache reset or a failed guard."""
    before = view.frame_link(previous)
    if view.compile.id.frame_compile_id == 0:
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
    found = trace_summary.recompile_of(view.frame.rank, view.compile)
    first = found.headline
    guard = compare.failed_guard(view.compile, previous)
    if first is not None and first.previous is not None and first.kind != "other":
        guard = compare.failed_guard(view.compile, first.previous) or guard
        if guard and first.previous is not previous:
            before = view.frame_link(first.previous)
    if guard and first is not None and first.kind == "guard_raised":
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
    if guard:
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


def _same_graph_blocks(found: trace_summary.Recompile) -> list[Block]:
    """A recompile that made the same graph again, every cache lookup a hit: said as such."""
    first = found.headline
    if not found.same_graph_cached or first is None or first.previous is None:
        return []
    hits = ", ".join(f"{e.cache} hit" for e in found.compile.cache_events)
    return [
        Paragraph(
            [
                f"This recompile made the same Dynamo graph as {first.previous.label}, and "
                f"every cache lookup hit ({hits}): the new version differs from it only in "
                "its guards."
            ]
        )
    ]


def _diff_blocks(view: _Frame, previous: Compile) -> list[Block]:
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


# -- failures and stack -----------------------------------------------------------------------


def _sizes_only_blocks(view: _Frame, previous: Compile) -> list[Block]:
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


def _across_ranks_section(view: _Frame) -> Section | None:
    """How this compile differs from the same compile id on the first rank that logged it:
    the reason it has pages of its own, each differing graph linked where this page shows
    it (the alike ones are shown once, on that rank's pages)."""
    other = view.frame.counterpart
    if other is None:
        return None
    where = view.frame.counterpart_label
    intro = Paragraph(
        [
            f"{where.split(' ')[0]} compiled the same compile id (",
            ObjectLink("frame", other.name),
            "), and this rank logged it differently, so this compile has pages of its own. "
            f"Graphs and kernels that are alike ({SET_ASIDE}) are shown once, on its "
            "pages; what differs:",
        ]
    )
    graphs = {g.name[len(view.frame.name) + 1 :]: g for g in view.frame.graphs}
    rows: list[list[Inlines]] = []
    for what, detail in view.frame.differences:
        graph = graphs.get(what)
        name: Inlines = [Code(what)]
        if graph is not None and graph.numbers_of is not None:
            name = [view.anchor_link(_artifact_anchor(graph.artifact), what)]
        elif graph is not None and graph.same_as is None:
            name = [place_link(graph.docname, graph.anchor, what)]
        rows.append([name, [detail]])
    if not rows:
        rows.append([["—"], [f"only its metrics and times ({SET_ASIDE})"]])
    table = Table([f"What differs from {where}", "How"], rows, widths=[2, 3])
    return Section([_("Compared with the first rank")], [intro, table], anchor="across-ranks")


def _failures_section(view: _Frame) -> Section | None:
    c = view.compile
    if not c.failures:
        return None
    title = _failures_title(c)
    blocks: list[Block] = []
    for failure in c.failures:
        blocks += _failure_blocks(view, failure)
    for a in c.artifacts_named("dynamo_error"):
        if a.payload is not None:
            blocks.append(
                Dropdown(
                    [f"Traceback of the error (dynamo_error, line {a.line} of the log)"],
                    [CodeBlock(view.strip(a.text()), "pytb")],
                    anchor=_artifact_anchor(a),
                )
            )
    return Section([title], blocks, anchor="failures")


def _failures_title(c: Compile) -> str:
    """The failures section's title, which the artifacts shown in it are said to be under."""
    if len(c.failures) > 1:
        return "Failures, restarts and graph breaks"
    return FAILURE_TITLES.get(c.failures[0].kind, "Failure")


def _failure_blocks(view: _Frame, failure: Failure) -> list[Block]:
    """A failure as torch structures it: each break's type, registry id, explanation and
    hints, a chained break under "Then"; the debug context and the whole message folded."""
    reason = failure.reason
    message = parse_message(reason)
    head: list[Inline] = [Strong(failure.type or failure.kind.replace("_", " "))]
    found = failure_outcome(view.compile) if failure.kind == "failure" else None
    if found is not None and found.raised_as:  # torch's own error, as torch raised it
        head = [Strong(f"{found.raised_as} ({failure.type})")]
    error = next((f for f in view.compile.failures if f.kind == "failure"), None)
    if failure.kind == "graph_break" and error is not None:
        # one event, as the overview counts it: the break that made the compile fail
        head = [Strong("Compile error"), f" ({error.type or 'failure'}): a graph break"]
    named = named_place(view.compile, [failure], message)
    where, in_torch = failure_places(view.compile, reason, named)
    if where:
        head += [" at ", Code(view.strip(where))]
    if in_torch:
        head += [" (raised in library code at ", Code(view.strip(in_torch)), ")"]
    head.append(f" (line {failure.line} of the log)" + (":" if message.parts else "."))
    blocks: list[Block] = [Paragraph(head)]
    if not message.parts and reason.strip():
        blocks.append(Paragraph(linked(view.strip(message.headline))))
    for i, part in enumerate(message.parts):
        title: list[Inline] = ["Then: "] if i else []
        title.append(Strong(view.strip(part.type)))
        if part.registry_id:
            title += [" (", Link(part.url, part.registry_id) if part.url else part.registry_id, ")"]
        lines: list[list[Inline]] = [title]
        if part.explanation:
            lines.append(linked(view.strip(part.explanation)))
        blocks.append(Lines(lines))
        hints = [h for h in part.hints if not h.lower().startswith("please report")]
        if hints:
            items = [[Paragraph(["Hint: ", *linked(view.strip(h))])] for h in hints]
            blocks.append(BulletList(items))
    blocks += _failure_links(view, failure, message)
    contexts = [p.context for p in message.parts if p.context]
    folded = "\n".join(contexts)
    if folded:
        context = CodeBlock(view.strip(folded), "text")
        blocks.append(Dropdown([_("Developer debug context")], [context]))
    logged = _logged_break(view.compile, failure)  # its artifact's row links this fold
    if message.parts or reason.strip() != message.headline or logged is not None:
        whole = "The whole message, with tracebacks"
        anchor = ""
        if logged is not None:
            whole += f" ({logged.name}, line {logged.line} of the log)"
            anchor = _artifact_anchor(logged)
        blocks.append(Dropdown([whole], [CodeBlock(view.strip(reason), "text")], anchor=anchor))
    return blocks


def _logged_break(c: Compile, failure: Failure) -> Artifact | None:
    """The ``dynamo_graph_break_reason`` artifact a graph break was read from: its text is
    the break's whole message, so the page shows it once, here, at the artifact's anchor."""
    if failure.kind != "graph_break":
        return None
    for a in c.artifacts_named("dynamo_graph_break_reason"):
        if a.line == failure.line and a.payload is not None and a.text().strip() == failure.reason:
            return a
    return None


def _break_of(c: Compile, a: Artifact) -> Failure | None:
    """The graph break shown from artifact ``a``, if it is one (see :func:`_logged_break`)."""
    if a.name != "dynamo_graph_break_reason":
        return None
    return next((f for f in c.failures if _logged_break(c, f) is a), None)


def _failure_links(view: _Frame, failure: Failure, message: BreakMessage) -> list[Block]:
    """Where else to look: the break among the trace's distinct graph breaks (its ``gb``
    object, every place it happened) and where this compilation started in the stack trie."""
    links: list[list[Inline]] = []
    # a graph break that made torch give up on the frame is listed as that compile error
    failed = any(f.kind == "failure" for f in view.compile.failures)
    name = view.plan.break_object(message) if not failed else None
    if name is not None and view.settings.shows("failures"):
        gb = ObjectLink("gb", name, message.first_part.type)
        links.append(["This graph break, everywhere the trace has it: ", gb])
    anchor = view.plan.trie_anchor(view.frame) if view.settings.shows("trie") else None
    if anchor is not None:
        trie = AnchorLink(view.plan.index_docname, anchor, "where this compilation started")
        links.append(["In the overview's stack trie: ", trie])
    return [Lines(links)] if links else []


def _stack_section(view: _Frame) -> Section | None:
    stack = view.compile.stack
    if not stack:
        return None
    user_frames = [f for f in stack if f.is_user_code]
    torch_frames = [f for f in stack if not f.is_user_code]
    blocks: list[Block] = []
    if user_frames:
        blocks.append(
            Paragraph(
                [
                    "The call stack in user code, outermost first; the last frame is the one "
                    "compiled:"
                ]
            )
        )
        with_code = not view.settings.no_source and any(f.loc for f in user_frames)
        header = ["File", "Line", "Function"] + (["Code"] if with_code else [])
        rows: list[list[Inlines]] = []
        for f in user_frames:
            row: list[Inlines] = [[Code(f.filename)], [str(f.line)], [Code(f.name)]]
            if with_code:
                row.append([Code(f.loc)] if f.loc else [])
            rows.append(row)
        blocks.append(Table(header, rows, [3, 1, 2, 4] if with_code else [3, 1, 2]))
    if torch_frames:
        count = len(torch_frames)
        title = f"{count} frame{'s' if count > 1 else ''} in PyTorch and Python"
        blocks.append(Dropdown([title], [CodeBlock(_traceback_text(view, torch_frames), "pytb")]))
    return Section([_("Where it was compiled from")], blocks, anchor="stack")


def _traceback_text(view: _Frame, frames: Sequence[StackFrame]) -> str:
    """Frames as Python prints a traceback (and tlparse shows a stack)."""
    lines: list[str] = []
    for f in frames:
        lines.append(f'  File "{f.filename}", line {f.line}, in {f.name}')
        if f.loc and not view.settings.no_source:
            lines.append(f"    {f.loc}")
    return "\n".join(lines)


# -- metrics ----------------------------------------------------------------------------------


def _metrics_section(view: _Frame) -> Section | None:
    records = view.compile.metrics
    if not records:
        return None
    if len(records) == 1:
        blocks = _metrics_blocks(view, records[0])
        return Section([_("Compilation metrics")], blocks, anchor="metrics")
    tabs = [Tab(_metrics_title(records, m), _metrics_blocks(view, m)) for m in records]
    return Section([_("Compilation metrics")], [TabSet(tabs)], anchor="metrics")


def _metrics_title(records: Sequence[Metrics], record: Metrics) -> str:
    """``Forward``, ``Backward``; numbered when a compile logged several of one kind."""
    same_kind = [m for m in records if m.kind == record.kind]
    title = METRICS_TITLES.get(record.kind, record.kind)
    if len(same_kind) > 1:
        title += f" {next(i for i, m in enumerate(same_kind) if m is record) + 1}"
    return title


def _metrics_blocks(view: _Frame, record: Metrics) -> list[Block]:
    """The fields a reader looks for as a table, and the whole record as JSON, folded."""
    gpu_work = any(k.kernel.kind == "triton" for k in view.frame.kernels) or any(
        "triton" in a.name for a in view.compile.artifacts
    )
    rows: list[list[Inlines]] = [
        [metric_label(record.data, key, label, gpu_work), metric_value(key, record.data[key])]
        for key, label in METRIC_LABELS.items()
        if _worth_showing(key, record.data.get(key))
    ]
    blocks: list[Block] = []
    if rows:
        blocks.append(Table([_("Metric"), _("Value")], rows, [2, 3]))
    else:
        blocks.append(Paragraph(["No timing, size or failure fields in this record."]))
    shown = shown_record(record.data, view.settings.no_source)
    download = view.frame.record_download(record)
    if download is None:
        title = f"The whole {record.kind} record (line {record.line} of the log)"
        blocks.append(Dropdown([title], [CodeBlock(view.strip(json_text(shown)), "json")]))
        return blocks
    blocks.append(
        Paragraph(
            [
                f"The whole {record.kind} record ",
                WebOnly(
                    [f"(line {record.line} of the log) is a ", Download(download, "download"), "."],
                    [f"is line {record.line} of the log."],
                ),
            ]
        )
    )
    title = f"The {record.kind} record without its long values"
    shown = abridged_record(shown)
    blocks.append(Dropdown([title], [CodeBlock(view.strip(json_text(shown)), "json")]))
    return blocks


def metric_label(data: Mapping[str, Any], key: str, label: str, gpu_work: bool) -> Inlines:
    """torch's key, and plain words for it only where they apply to this run: a GPU or
    remote-cache gloss on a compile that made no Triton kernel or used no remote cache
    would state a fact the log does not (torch times these phases under these names on
    every run, and a CUDA build reports its Triton version on a CPU run too)."""
    gloss = label
    if key in GPU_METRICS and not gpu_work:
        gloss = ""
    if key in REMOTE_CACHE_METRICS and not (
        data.get("remote_cache_version") is not None
        or data.get("inductor_fx_remote_cache_backend_type")
    ):
        gloss = ""
    return [Code(key), *([f" ({gloss})"] if gloss else [])]


def _worth_showing(key: str, value: object) -> bool:
    if value is None or value == "" or value == [] or value == {}:
        return False
    return not (_is_number(value) and value == 0 and key not in ZERO_MEANS_SOMETHING)


def metric_value(key: str, value: object) -> list[Inline]:
    """A metric as a reader wants it: seconds (``_us`` fields too: one unit per table),
    yes/no, or the value cut short."""
    if isinstance(value, bool):
        return ["yes" if value else "no"]
    if _is_number(value):
        if key.endswith("_s") or key == "elapsed_time":
            seconds = plausible(value)
            return [_seconds(seconds)] if seconds is not None else [_odd_number(value)]
        if key.endswith("_us"):
            micros = plausible(value, MAX_SECONDS * 1e6)
            return [_seconds(micros / 1e6)] if micros is not None else [_odd_number(value)]
        return [str(value)] if _is_count(value) else [_odd_number(value)]
    if isinstance(value, str):
        text = value
    elif isinstance(value, Mapping):
        text = json.dumps(value, sort_keys=True, default=str)
    elif isinstance(value, (list, tuple)):
        text = ", ".join(str(v) for v in value)
    else:
        text = str(value)
    return [Code(_truncate(text, VALUE_LIMIT))]


# -- artifacts --------------------------------------------------------------------------------


def _artifacts_section(view: _Frame) -> Section | None:
    c = view.compile
    if not c.artifacts:
        return None
    ordered = [
        a for _, _, a in sorted((pipeline_position(a), i, a) for i, a in enumerate(c.artifacts))
    ]
    rows: list[list[Inlines]] = []
    inline: list[Artifact] = []
    for a in ordered:
        name_cell, content_cell, shown_below = _artifact_cells(view, a)
        if shown_below:
            inline.append(a)
        kernels = [k for k in view.frame.kernels if k.artifact is a]
        rows.append(
            [
                name_cell,
                [size_text(a.size)],
                [str(a.node_count)] if a.node_count is not None else [],
                [str(len(kernels))] if kernels else [],
                content_cell,
            ]
        )
    header, rows, widths = drop_empty_columns(
        ["Artifact", "Size", "Nodes", "Kernels", "Content"], rows, [6, 2, 1, 1, 2]
    )
    table = folded_if_long(Table(header, rows, widths), "artifacts")
    blocks: list[Block] = [Paragraph([ARTIFACTS_TEXT]), *_cache_note(c), table]
    for g in view.frame.graphs:
        if g.numbers_of is not None and g.artifact in c.artifacts:
            blocks.extend(_numbers_only_blocks(view, g))
    shown: list[Block] = []
    for a in ordered:  # small graphs and other artifacts, folded, in pipeline order
        graph = view.frame.graph_for(a)
        if graph is not None and graph.inline:
            shown.append(inline_graph(view.plan, view.frame, graph, view.settings))
        elif a in inline:
            shown.append(
                Dropdown(
                    [f"{a.name} ({size_text(a.size)}, line {a.line} of the log)"],
                    [CodeBlock(view.strip(a.text()), language_of(a))],
                    anchor=_artifact_anchor(a),
                )
            )
    blocks += folded_if_many(shown, "artifacts shown on this page")
    return Section([_("Artifacts")], blocks, anchor="artifacts")


#: Caches whose hit skips the compile steps that log graphs, as a reader knows them.
CACHES_SKIPPING_GRAPHS = {"fx_graph": "the FX graph cache", "aotautograd": "the AOT autograd cache"}


def _cache_note(c: Compile) -> list[Block]:
    """Why graphs are missing from a compile that a warm cache served: a hit skips the
    steps that log them (Inductor's pre-grad and joint graphs, and more)."""
    hits = [
        CACHES_SKIPPING_GRAPHS[cache]
        for cache in dict.fromkeys(ev.cache for ev in c.cache_events if ev.result == "hit")
        if cache in CACHES_SKIPPING_GRAPHS
    ]
    if not hits:
        return []
    text = "graphs not logged: compiled from " + " and ".join(f"{h} (hit)" for h in hits)
    return [
        Paragraph(
            [
                Strong("Some " + text),
                ". A warm cache skips the steps that log them; for a complete report, capture "
                "with ",
                Code("TORCHINDUCTOR_FORCE_DISABLE_CACHES=1"),
                ".",
            ]
        )
    ]


def _numbers_only_blocks(view: _Frame, graph: GraphPlan) -> list[Block]:
    """A graph that equals an earlier compile's but for its numbers: its object, and its
    first changes folded (the whole text a download), in place of a page of its own."""
    base = graph.numbers_of
    assert base is not None
    new = view.strip(graph.artifact.text()).split("\n")
    old = view.strip(base.artifact.text()).split("\n")
    changed = compare.sizes_only_changes(old, new)
    if changed is None:  # :no-source: cut the two texts differently
        changed = sum(1 for x, y in zip(old, new, strict=False) if x != y)
        old = old[: len(new)] + [""] * (len(new) - len(old))
    short = shown_name(graph.name[len(view.frame.name) + 1 :])
    base_label = graph.numbers_of_label
    target = ObjectTarget("graph", graph.name)
    if not changed:  # the very same text
        title = f"{_graph_title(view, graph)}: as {base_label}'s (the same text)"
        same: list[Inline] = [
            "The same text as ",
            place_link(base.docname, base.anchor, f"{base_label}'s"),
            WebOnly(["; ", Download(graph.raw_path, "this one's"), " is a download"]),
            ".",
        ]
        return [
            target,
            Dropdown([title], [Paragraph(same)], anchor=_artifact_anchor(graph.artifact)),
        ]
    diff, unshown = sizes_diff(old, new, f"{base_label} {short}", f"{view.compile.label} {short}")
    title = (
        f"{_graph_title(view, graph)}: as {base_label}'s but for its numbers "
        f"({changed} of {len(new)} lines differ)"
    )
    what = "guards" if graph.artifact.name in GUARD_ARTIFACTS else "graph"
    body = sizes_only_blocks(
        [f"The same {what} as ", place_link(base.docname, base.anchor, f"{base_label}'s")],
        changed,
        len(new),
        diff,
        unshown,
        whole_text(graph.raw_path, graph.artifact.line),
    )
    return [target, Dropdown([title], body, anchor=_artifact_anchor(graph.artifact))]


def _artifact_cells(view: _Frame, a: Artifact) -> tuple[Inlines, Inlines, bool]:
    """The name cell (a link where the artifact is shown), where its content is, and
    whether this page shows it below the table."""
    graph = view.frame.graph_for(a)
    if graph is not None and graph.numbers_of is not None:  # no page: shown below the table
        link = view.anchor_link(_artifact_anchor(a), _graph_title(view, graph))
        base = graph.numbers_of
        as_base = place_link(base.docname, base.anchor, f"{graph.numbers_of_label}'s")
        but = "; " if graph.numbers_same else " but for numbers; "
        printed: Inlines = [] if graph.numbers_same else [" but for numbers"]
        return [link], ["as ", as_base, WebOnly([but, _raw_download(graph)], printed)], False
    if graph is not None and graph.same_as is not None and graph.same_label:  # another rank's
        same = graph.same_as
        there: Inlines = ["as ", place_link(same.docname, same.anchor, f"{graph.same_label}'s")]
        return [place_link(same.docname, same.anchor, _graph_title(view, graph))], there, False
    if graph is not None and graph.same_as is not None:  # identical: no page of its own
        same = graph.same_as
        what = f"unchanged by {graph.unchanged_by}: " if graph.unchanged_by else "as "
        cell: Inlines = [what, place_link(same.docname, same.anchor, _graph_title(view, same))]
        return [place_link(same.docname, same.anchor, _graph_title(view, graph))], cell, False
    if graph is not None and graph.inline:  # small: shown below the table
        where: Inlines = (
            ["below"] if not graph.raw_path else ["below", WebOnly([", ", _raw_download(graph)])]
        )
        return [view.anchor_link(graph.anchor, _graph_title(view, graph))], where, False
    if graph is not None:
        return (
            [PageLink(graph.docname, _graph_title(view, graph))],
            [WebOnly([_raw_download(graph)], ["on its page"])],
            False,
        )
    if a.payload is None:
        return [Code(a.name)], ["no content"], False
    link = view.anchor_link(_artifact_anchor(a), a.name)
    if (a.name == "dynamo_error" and view.compile.failures) or _break_of(view.compile, a):
        # the failures section shows it, anchored: an error's traceback, a break's message
        return [link], [f"under {_failures_title(view.compile)}"], False
    copy = view.plan.first_copy(a)
    if copy is not None:  # the same text as on an earlier compile's page: linked there
        other_frame, other = copy
        shown = AnchorLink(other_frame.docname, _artifact_anchor(other), a.name)
        return [shown], ["as ", ObjectLink("frame", other_frame.name), "'s"], False
    if a.size <= INLINE_LIMIT:
        return [link], ["below"], True
    raw = view.frame.download_for(a)
    if raw is not None:
        return (
            [Code(a.name)],
            [
                WebOnly(
                    [Download(raw.raw_path, "raw")],  # too large to show
                    [f"too large to show: line {a.line} of the log"],
                )
            ],
            False,
        )
    return [Code(a.name)], ["too large to show"], False


def _graph_title(view: _Frame, graph: GraphPlan) -> str:
    """A graph's name on this frame; ``(forward)``/``(backward)`` where both were logged."""
    a, c = graph.artifact, view.compile
    same_name = c.artifacts_named(a.name)
    has_backward = bool(c.artifacts_named("aot_backward_graph"))
    if has_backward and len(same_name) == 2 and a.name not in NOT_PHASED:
        title = f"{a.name} ({'forward' if a is same_name[0] else 'backward'})"
    else:
        title = shown_name(graph.name[len(view.frame.name) + 1 :])
    return f"{title} [{a.subgraph}]" if a.subgraph is not None else title  # regional Inductor


def _raw_download(graph: GraphPlan) -> Download:
    label = "runnable .py" if graph.artifact.name == "fx_graph_runnable" else "raw"
    return Download(graph.raw_path, label)


def _artifact_anchor(a: Artifact) -> str:
    return f"artifact-{a.ordinal}"


def _provenance_section(view: _Frame) -> Section | None:
    """The side-by-side view of every node mapping that links anything: a training compile
    logs the forward's and the backward's, each shown (tlparse shows the last one only)."""
    c = view.compile
    linked = [i for i, v in enumerate(provenance_views(c)) if not v.empty]
    if not linked:  # no node mapping logged, or none that links anything
        return None
    title = [_("Provenance: what each operator became")]
    copy = view.plan.provenance_copy(view.frame)
    if copy is not None:  # a recompile of the same graphs: the view is the earlier one's
        same: list[Inline] = [
            "The node mappings, graphs and code are ",
            ObjectLink("frame", copy.name),
            "'s, text for text: see ",
            AnchorLink(copy.docname, "provenance", "its provenance view"),
            ".",
        ]
        return Section(title, [Paragraph(same)], anchor="provenance")
    blocks: list[Block] = [Paragraph([PROVENANCE_TEXT])]
    training = bool(c.artifacts_named("aot_backward_graph"))
    names = (
        ["Forward", "Backward"]
        if len(linked) == 2 and training
        else [f"Mapping {n + 1}" for n in range(len(linked))]
    )
    for name, index in zip(names, linked, strict=True):
        if len(linked) > 1:
            blocks.append(Paragraph([Strong(name)]))
        blocks.append(Provenance(view.frame.name, view=index))
    return Section(title, blocks, anchor="provenance")


# -- kernels, shapes, caches ------------------------------------------------------------------


def _kernels_section(view: _Frame) -> Section | None:
    kernels = view.frame.kernels
    if not kernels:
        return None
    bases = {k.numbers_of_label for k in kernels if k.numbers_of is not None}
    # every kernel an earlier compile's, but for its numbers: said once, not on every row
    said_once = len(bases) == 1 and all(k.numbers_of is not None for k in kernels)
    codes = list({id(k.artifact): k.artifact for k in kernels}.values())
    phased = len(codes) == 2 and bool(view.compile.artifacts_named("aot_backward_graph"))
    names = (
        ["forward code", "backward code"]
        if phased
        else [f"output code {i + 1}" for i in range(len(codes))]
        if len(codes) > 1
        else ["output code"]
    )
    short = {id(a): n for a, n in zip(codes, names, strict=True)}  # narrow: rows stay short
    short.update({id(a): f"{short[id(a)]} [{a.subgraph}]" for a in codes if a.subgraph})
    rows = [
        row
        for k in kernels
        for row in _kernel_rows(view.frame, k, short[id(k.artifact)], noted=not said_once)
    ]
    blocks: list[Block] = [ObjectTarget("kernel", k.name) for k in kernels if k.numbers_of]
    if said_once:
        blocks.append(
            Paragraph(
                [
                    f"Every kernel is {next(iter(bases))}'s (its source the same, or the same "
                    "but for its numbers): each links to that compile's kernel page."
                ]
            )
        )
    if any(k.kernel.kind == "extern" for k in kernels):
        blocks.append(
            Paragraph(
                [
                    "Generated kernels, then the library (extern) kernels the code calls, each "
                    "once with the lines that call it and the graph nodes it computes."
                ]
            )
        )
    header, rows, widths = drop_empty_columns(
        ["Kernel", "Kind", "In", "Source nodes"], rows, [4, 2, 2, 3]
    )
    unknown = sum(
        1
        for k in kernels
        if k.kernel.kind != "extern" and k.numbers_of is None and not graph_nodes_of(view.frame, k)
    )
    if unknown:  # say why the column is empty, and how to fill it
        version = trace_summary.torch_version(view.frame.rank)  # the log's own, never ours
        blocks.append(
            Paragraph(
                [
                    f"The graph nodes of {unknown} generated "
                    f"kernel{'s' if unknown > 1 else ''} were not logged: "
                    "Inductor names them in a ",
                    Code("Source Nodes"),
                    " comment for some kernels only, and this log"
                    + (f" (torch {version})" if version else "")
                    + f" has none for {'these' if unknown > 1 else 'this one'}. Captured with ",
                    Code("torch._inductor.config.trace.provenance_tracking_level = 1"),
                    ", a compile logs which nodes each kernel computes, and this table shows them.",
                ]
            )
        )
    table = Table(header, rows, widths, classes=["torchtrace-kernels"])
    blocks.append(folded_if_long(table, "kernels"))
    shown = [inline_kernel(view.plan, view.frame, k, view.settings) for k in kernels if k.inline]
    blocks += folded_if_many(shown, "kernels shown on this page")
    return Section([_("Kernels")], blocks, anchor="kernels")


#: Rows a reference table (artifacts, kernels, shape events) shows unfolded on a frame
#: page: a longer one is folded whole, so that the answer and every section's heading
#: stay within a few screens (a recompiled frame of a big model lists 70 kernels, and
#: shape events take two or three lines a row).  Measured with
#: ``benchmarks/bench_page_height.py``: every frame page of the corpus within 6 screens.
FOLDED_TABLE_ROWS = 8
#: Folds (graphs, artifacts, kernels) a section lists one under another; more are
#: themselves in one fold (a DDP frame logs forty artifacts).
FOLDS_LISTED = 12


def folded_if_long(table: Table, what: str) -> Block:
    """The table, or past :data:`FOLDED_TABLE_ROWS` rows the table in a closed fold
    titled with its count: nothing left out, the page no taller than its headings."""
    if len(table.rows) <= FOLDED_TABLE_ROWS:
        return table
    return Dropdown([f"The table of {len(table.rows)} {what}"], [table])


def folded_if_many(blocks: Sequence[Block], what: str) -> list[Block]:
    """Folds listed one under another, or past :data:`FOLDS_LISTED` of them one fold
    holding them all (a fold's title is a line: forty are a screen and a half); a link
    to one of them opens both (``sphinx-torchtrace.js``)."""
    if len(blocks) <= FOLDS_LISTED:
        return list(blocks)
    return [Dropdown([f"The {len(blocks)} {what}"], blocks)]


def _kernel_rows(
    frame: FramePlan, k: KernelPlan, code_name: str, noted: bool = True
) -> list[list[Inlines]]:
    """One row per kernel, an extern (library) kernel one row with its calls counted.
    ``code_name`` names the output code it is in; ``noted``: a kernel shown on an earlier
    compile's page says so in its row."""
    code: Inline = code_link(k, code_name) if k.code is not None else code_name
    kernel = k.kernel
    name: Inlines = [place_link(k.docname, k.anchor, kernel.name)]
    if k.numbers_of is not None:  # no page: the earlier compile's kernel's page
        but = "" if k.numbers_of.kernel.source == kernel.source else " but for numbers"
        base = k.numbers_of
        name = [place_link(base.docname, base.anchor, kernel.name)]
        name += [f" (as {k.numbers_of_label}'s{but})"] if noted else []
    if kernel.kind != "extern":
        nodes = ", ".join(graph_nodes_of(frame, k))
        return [
            [
                name,
                [kernel.kind.replace("_", " ")],
                [code],
                [Code(_truncate(nodes, SOURCE_NODES_LIMIT))] if nodes else [],
            ]
        ]
    # a library (extern) kernel: one row however often the code calls it, its calls counted
    calls = kernel.calls  # a repeated subgraph's line counted once per call of it
    sites = len(kernel.launch_lines)
    lines = ", ".join(str(n) for n in kernel.launch_lines[:EXTERN_LINES])
    more = f" and {sites - EXTERN_LINES} more" if sites > EXTERN_LINES else ""
    where: Inlines = [code, f" line{'s' if sites > 1 else ''} {lines}{more}"] if sites else [code]
    nodes = ", ".join(dict.fromkeys(n for call in kernel.call_nodes for n in call))
    nodes = nodes or ", ".join(kernel.source_nodes)
    kind = f"extern, {calls} calls" if calls > 1 else "extern"
    return [[name, [kind], where, [Code(_truncate(nodes, SOURCE_NODES_LIMIT))] if nodes else []]]


def drop_empty_columns(
    header: Sequence[str], rows: Sequence[Sequence[Inlines]], widths: Sequence[int] | None
) -> tuple[list[str], list[list[Inlines]], list[int] | None]:
    """The table without the columns no row fills: an empty column only costs width."""
    keep = [i for i in range(len(header)) if i == 0 or any(row[i] for row in rows)]
    return (
        [header[i] for i in keep],
        [[row[i] for i in keep] for row in rows],
        [widths[i] for i in keep] if widths is not None else None,
    )


def _shapes_section(view: _Frame) -> Section | None:
    events = view.compile.shape_events
    if not events:
        return None
    rows: list[list[Inlines]] = []
    for ev in events:
        d = ev.data
        what = d.get("symbol") or d.get("expr") or d.get("value")
        value = (
            d.get("val")
            if d.get("val") is not None
            else (d.get("value") if d.get("symbol") else None)
        )
        where = d.get("source") or d.get("sources") or d.get("vr") or d.get("reason")
        user = ev.user_stack[-1] if ev.user_stack else None
        rows.append(
            [
                [ev.kind.replace("_", " ")],
                [Code(_truncate(str(what), CELL_LIMIT))] if what is not None else [],
                [Code(str(value))] if value is not None else [],
                [Code(_truncate(str(where), CELL_LIMIT))] if where else [],
                [Code(f"{user.filename}:{user.line}")] if user else [],
            ]
        )
    header = ["Event", "Symbol or guard", "Value", "Source or range", "User code"]
    intro = "Symbols created for dynamic sizes and the guards added on them while tracing."
    return Section(
        ["Dynamic shapes"],
        [Paragraph([intro]), folded_if_long(Table(header, rows, [2, 3, 1, 3, 3]), "events")],
        anchor="dynamic-shapes",
    )


def _cache_section(view: _Frame) -> Section | None:
    events = view.compile.cache_events
    if not events:
        return None
    rows: list[list[Inlines]] = [
        [[ev.cache], [ev.result], [Code(ev.artifact)], [str(ev.line)]] for ev in events
    ]
    table = Table([_("Cache"), _("Result"), _("Artifact"), _("Log line")], rows, [2, 1, 3, 1])
    return Section([_("Cache lookups")], [table], anchor="cache-lookups")


# -- formatting -------------------------------------------------------------------------------


def _is_number(value: object) -> TypeGuard[int | float]:
    """Numbers as metrics hold them; booleans are flags, not counts."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MAX_COUNT


def _seconds(value: object) -> str:
    """``1.234 s``; a dash for what is no duration (a string, infinite, ``1e308``)."""
    seconds = plausible(value)
    return "—" if seconds is None else f"{seconds:.3f} s"


def _odd_number(value: int | float) -> Code:
    """A logged number that no compile could have measured, shown as the log has it."""
    return Code(_truncate(str(value), ODD_NUMBER_LIMIT))


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
