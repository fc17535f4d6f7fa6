"""The CUDA graph parts of the pages, and the frame page's note on text logs.

Kept apart from the frame and overview views (one call each there): CUDA graph records
are rare, and what a text log cannot say is said once, here.
"""

from __future__ import annotations

from ...trace import Compile, RankTrace
from ...trace.analyses import cudagraphs as cg
from ..blocks import Block, Code, Inline, Inlines, ObjectLink, Paragraph, Section, Table
from ..plan import TracePlan
from ..words import _

#: Characters of a reason shown in a cell.
REASON_LIMIT = 300

TEXT_LOG_TEXT = (
    "Read from a TORCH_LOGS text log: a text log carries no metrics (no times, counts or "
    "cache figures), so this page shows what the log's messages say. The status is error "
    "when the log says the compilation failed, break when it restarted or broke its graph, "
    "and missing otherwise."
)
OUTCOMES = {
    "recorded": "runs as CUDA graphs",
    "skipped": "CUDA graphs skipped",
    "unknown": "CUDA graph messages only",
}


def text_log_section(rank: RankTrace) -> Section | None:
    """On a frame page of a text log: what its status and figures can and cannot say."""
    if rank.source != "torch_logs":
        return None
    return Section([_("Text log")], [Paragraph([TEXT_LOG_TEXT])], anchor="text-log")


def cudagraphs_section(c: Compile) -> Section | None:
    """A frame's CUDA graphs: recorded or skipped and why, warm-ups, (re-)recordings."""
    found = cg.frame_cudagraphs(c)
    if found is None:
        return None
    facts: list[Inlines] = [[f"Outcome: {OUTCOMES[found.outcome]}."]]
    for reason in found.skip_reasons:
        facts.append(["Skipped because: ", Code(_cut(reason))])
    if found.record_time_us is not None:
        facts.append([f"Time spent recording at run time: {found.record_time_us / 1e6:.3f} s."])
    counts = [
        (found.count("tree"), "tree recordings"),
        (found.count("warmup"), "warm-ups"),
        (found.count("record"), "recordings"),
        (found.count("rerecord"), "re-recordings"),
    ]
    said = [f"{n} {what}" for n, what in counts if n]
    if said:
        facts.append(["From the text log: " + ", ".join(said) + "."])
    blocks: list[Block] = [Paragraph(line) for line in facts]
    events = [e for e in found.events if e.kind in ("record", "rerecord", "skip", "tree")]
    if events:
        rows: list[list[Inlines]] = [
            [[str(e.line)], [e.kind], [Code(_cut(e.function or "—"))], [_cut(e.reason or "")]]
            for e in events[:200]
        ]
        blocks.append(Table([_("Line"), _("Event"), _("Function"), _("Detail")], rows))
    return Section([_("CUDA graphs")], blocks, anchor="cuda-graphs")


def cudagraphs_overview_blocks(plan: TracePlan) -> list[Block]:
    """The overview's CUDA graph summary: which frames ran as CUDA graphs, which were
    skipped and why, how often they re-recorded.  Nothing when no rank says anything."""
    rows: list[list[Inlines]] = []
    multi = plan.trace.is_multi_rank
    for rank in plan.trace.ranks:
        for found in cg.rank_cudagraphs(rank):
            frame = plan.frame_for(found.compile)
            name: Inline = (
                ObjectLink("frame", frame.name) if frame is not None else Code(found.compile.label)
            )
            row: list[Inlines] = [
                [name],
                [OUTCOMES[found.outcome]],
                [_cut("; ".join(found.skip_reasons))] if found.skip_reasons else [],
                [str(found.count("rerecord"))],
            ]
            rows.append(
                [[str(rank.rank) if rank.rank is not None else "—"], *row] if multi else row
            )
    if not rows:
        return []
    header = [
        *(["Rank"] if multi else []),
        "Frame",
        "CUDA graphs",
        "Skipped because",
        "Re-recordings",
    ]
    intro = Paragraph(
        [
            'Frames compiled for CUDA graphs (mode="reduce-overhead"): recorded, or skipped '
            "and why. Re-recordings are counted from TORCH_LOGS=cudagraphs text logs only; "
            "a TORCH_TRACE log records none."
        ]
    )
    return [Section([_("CUDA graphs")], [intro, Table(header, rows)], anchor="cuda-graphs")]


def _cut(text: str) -> str:
    return text if len(text) <= REASON_LIMIT else text[:REASON_LIMIT] + "…"
