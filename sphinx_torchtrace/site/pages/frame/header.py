"""The head of a frame page: its status, what followed a failure, and the facts at a glance."""

from __future__ import annotations

from collections.abc import Sequence

from ....trace import CacheEvent, Compile
from ....trace.analyses import compare
from ....trace.analyses.caches import BUNDLED
from ....trace.analyses.naming import compiled_function, function_source
from ....trace.analyses.outcome import failure_outcome, refusal
from ....trace.analyses.status import attempts_status
from ....trace.analyses.timings import plausible
from ...artifacts import GUARD_ARTIFACTS
from ...blocks import (
    Badge,
    Code,
    Inline,
    Inlines,
    Lines,
    ObjectLink,
    PageLink,
    Paragraph,
    Strong,
    joined,
    place_link,
)
from ...outcome_words import OUTCOME_WORDS, REFUSAL_WORDS, because
from ...plan import FramePlan, TracePlan
from ...statuses import STATUS_MEANING
from ..vllm import capture_note, unknown_page_note
from .metrics import METRICS_TITLES
from .view import FrameView, artifact_anchor, is_count, seconds_text

UNKNOWN_COMPILE_TEXT = (
    "Records logged outside any compilation (the PyTorch version, ahead-of-time compilation, "
    "and the like); not a compile of its own."
)
RESTARTED_TEXT = "This attempt was restarted: the next attempt carries on from where it stopped."


def _attempts(view: FrameView) -> list[FramePlan]:
    """Every attempt of this compile id in this occurrence, this one included, in log order."""
    return view.plan.attempts_of(view.frame)  # an index: a scan per page is quadratic


def _function_of(view: FrameView) -> tuple[str | None, Inline | None]:
    """The function compiled and where it is defined, as the directory names it
    (:func:`.naming.compiled_function`: a compile that failed early logs no code name)."""
    name, place = compiled_function(view.frame.rank, view.compile)
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


def _whole_frame_status(view: FrameView) -> list[Inline]:
    """Where this attempt's status is not the frame's: the frame's, as tlparse shows it."""
    c = view.compile
    whole = attempts_status(view.frame.rank, c)
    if len(_attempts(view)) < 2 or whole == c.status:
        return []
    return [" Over all its attempts, ", Code(str(c.id.frame)), " is ", Badge(whole), "."]


def status_paragraph(view: FrameView) -> Paragraph:
    """The compile's status badge and what it means, what followed a failure, and the
    graph breaks torch resumed from."""
    c = view.compile
    if c.id.is_unknown and (held := unknown_page_note(view.plan, c)) is not None:
        return held  # vLLM's compiles, logged without a compile id
    if c.status == "missing" and (captured := capture_note(view.plan, c)) is not None:
        return captured  # Dynamo's part of vLLM's compile: its metrics carry no id
    text = UNKNOWN_COMPILE_TEXT if c.id.is_unknown else STATUS_MEANING.get(c.status, "")
    content: list[Inline] = [_attempt_badge(view.plan, view.frame, c.status), f" {text}"]
    if c.restarted:
        content.append(f" {RESTARTED_TEXT}")
    content += _whole_frame_status(view)
    if (captured := capture_note(view.plan, c)) is not None:
        content += [" ", *captured.content]  # what vLLM did with this capture
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


def _outcome(view: FrameView) -> list[Inline]:
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


def fact_lines(view: FrameView) -> Lines:
    """The compile at a glance, one ``Label: value`` line per fact it has."""
    c, frame = view.compile, view.frame
    facts = _function_fact(view)
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
    facts += _neighbour_facts(view)
    facts += _metric_facts(view)
    if c.cache_events:
        facts.append(("Caches", [", ".join(_cache_said(ev) for ev in c.cache_events)]))
    if frame.kernels:
        facts.append(("Kernels", [view.anchor_link("kernels", str(len(frame.kernels)))]))
    facts.append(("Chromium events", [str(c.chromium_event_count)]))
    return Lines([[f"{label}: ", *value] for label, value in facts], classes=["torchtrace-facts"])


def _cache_said(ev: CacheEvent) -> str:
    if ev.cache == BUNDLED:  # no lookup: the FX graph an AOT-autograd cache hit carried
        return "fx_graph loaded from inside an aotautograd entry"
    return f"{ev.cache} {ev.result}"


def _function_fact(view: FrameView) -> list[tuple[str, Inlines]]:
    """The function compiled and where it is defined, and whose record names it."""
    fn_name, fn_where = _function_of(view)
    if not (fn_name or fn_where):
        return []
    c = view.compile
    where: list[Inline] = [" in ", fn_where] if fn_where else []
    source = function_source(view.frame.rank, c)
    if source is not None and source is not c:  # say whose record names it
        where += [
            " (named by the metrics of ",
            view.frame_link(source),
            "; this compile's metrics name no function)",
        ]
    elif source is None and c.stack:
        where += [" (from the stack logged when it started)"]
    return [("Function", [Code(fn_name or "?"), *where])]


def _neighbour_facts(view: FrameView) -> list[tuple[str, Inlines]]:
    """The compile of this function before this one and after it, each said to have made
    a version or not."""
    rank = view.frame.rank
    facts: list[tuple[str, Inlines]] = []
    if view.previous is not None:
        what_changed = view.anchor_link("changed", "what changed")
        made = compare.made_version(rank, rank.first_attempt(view.previous))
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
    next_ = compare.next_compile(rank, view.compile)
    if next_ is not None:
        made = compare.made_version(rank, rank.first_attempt(next_))
        facts.append(
            (
                "Compiled again" if made else "Next compile",
                [view.frame_link(next_), *([] if made else [_no_version(next_)])],
            )
        )
    return facts


def _no_version(compile_: Compile) -> str:
    """Beside a neighbour that made no version: refused, or failed."""
    return " (refused: no version made)" if compare.is_refused(compile_) else " (no version made)"


def _metric_facts(view: FrameView) -> list[tuple[str, Inlines]]:
    """Compile time, graph size and guards, from the first compilation-metrics record."""
    c = view.compile
    m = c.compilation_metrics[0].data if c.compilation_metrics else {}
    facts: list[tuple[str, Inlines]] = []
    total, backend = m.get("entire_frame_compile_time_s"), m.get("backend_compile_time_s")
    if plausible(total) is not None:
        backend_text = (
            f" (backend {seconds_text(backend)})" if plausible(backend) is not None else ""
        )
        facts.append(("Compile time", [seconds_text(total) + backend_text]))
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
            else [view.anchor_link(artifact_anchor(g.artifact), g.artifact.name)]
            for g in guard_pages
        ]
        facts.append(("Guards", [guards or "see", *([": ", *joined(links)] if links else [])]))
    return facts


def _counts(pairs: Sequence[tuple[object, str]]) -> str:
    """``3 operators, 1 node``: the counts a record has, each with its noun."""
    return ", ".join(f"{n} {noun}{'' if n == 1 else 's'}" for n, noun in pairs if is_count(n))
