"""Compile workers on a compile's page and at a glance: jobs the workers' watchdog
reported still running, and a worker sidecar that died (:mod:`...trace.analyses.workers`).

Kept apart from the frame view (one call there): only torch 2.14 and later log them.
"""

from __future__ import annotations

import json
from typing import Any

from ...trace import Compile
from ...trace.analyses.workers import (
    DEATH,
    SidecarDeath,
    WorkerJob,
    compile_jobs,
    death_of,
    sidecar_deaths,
)
from ..blocks import (
    Block,
    Code,
    CodeBlock,
    Dropdown,
    Inline,
    Inlines,
    ObjectLink,
    Paragraph,
    Section,
    Table,
    capped_joined,
    joined,
)
from ..plan import FramePlan, TracePlan
from ..words import _

#: Characters of a field's value shown in a cell.
VALUE_LIMIT = 200
#: Jobs listed in a table, at most.
JOB_ROWS = 200
#: Items the glance line names, at most.
GLANCE_ITEMS = 4

PLACED_TEXT = (
    "Inductor's compile workers report a job that is still running after the watchdog's "
    "interval (compile_worker_watchdog_interval_seconds), again at each interval. A report "
    "names its compile in its payload (compile_id), not in its envelope: it is placed under "
    "that compile here, at the attempt being read."
)
UNPLACED_TEXT = (
    "Inductor's compile workers report a job that is still running after the watchdog's "
    "interval (compile_worker_watchdog_interval_seconds), again at each interval. A report "
    "names its compile in its payload (compile_id): these name none, or a compile this log "
    "has no other record of, so they stay with the records without a compile id."
)


def workers_section(plan: TracePlan, frame: FramePlan) -> Section | None:
    """A compile's worker jobs still running, and the sidecar death its failure names (or,
    on the page of records without a compile id, every death logged there)."""
    c = frame.compile
    jobs = compile_jobs(c)
    blocks: list[Block] = []
    if jobs:
        blocks.append(Paragraph([UNPLACED_TEXT if c.id.is_unknown else PLACED_TEXT]))
        blocks.append(Paragraph(_jobs_sentence(jobs, c.id.is_unknown)))
        rows = [_job_row(job) for job in jobs[:JOB_ROWS]]
        header = [_("Job"), _("Reports"), _("Running for"), _("Last phase"), _("Worker pid")]
        header += [_("Lines"), _("Other fields")]
        blocks.append(Table(header, rows))
        if len(jobs) > JOB_ROWS:
            blocks.append(Paragraph([f"And {len(jobs) - JOB_ROWS} more jobs."]))
    logged_here = c.artifacts_named(DEATH)  # the rank is read only where one is
    deaths = [d for d in sidecar_deaths(frame.rank) if _logged_in(d, c)] if logged_here else []
    ended = death_of(frame.rank, c)
    if ended is not None and not any(d is ended for d in deaths):
        deaths.append(ended)
    for death in deaths:
        blocks.extend(_death_blocks(plan, frame, death, c))
    if not blocks:
        return None
    return Section([_("Compile workers")], blocks, anchor="compile-workers")


def glance_line(plan: TracePlan) -> list[Inline] | None:
    """``Compile workers:`` for the glance: the longest-running job of each compile the
    watchdog reported, and each sidecar death; None when no log has either."""
    parts: list[Inlines] = []
    for frame in plan.frames:
        if frame.same_as is not None:
            continue
        jobs = compile_jobs(frame.compile)
        if jobs:
            longest = max(jobs, key=lambda j: j.longest or 0.0)
            n = len(jobs)
            whose: Inlines = (
                [" whose reports name no compile of this log,"]
                if frame.compile.id.is_unknown
                else [" of ", ObjectLink("frame", frame.name)]
            )
            parts.append(
                [
                    f"{n} job{'s' if n > 1 else ''}",
                    *whose,
                    f" still running when reported (the longest {_seconds(longest.longest)}, "
                    f"line {longest.last.line})",
                ]
            )
    for rank in plan.trace.ranks:
        for death in sidecar_deaths(rank):
            said: Inlines = [
                f"the compile worker sidecar{_pid(death)} died{_code(death)} (line {death.line})"
            ]
            if death.ended:
                links = [[_compile_link(plan, c)] for c in death.ended]
                said = [*said, ", failing ", *capped_joined(links)]
            parts.append(said)
    if not parts:
        return None
    line: list[Inline] = [_("Compile workers:"), " ", *joined(parts[:GLANCE_ITEMS], "; ")]
    if len(parts) > GLANCE_ITEMS:
        line.append(f"; and {len(parts) - GLANCE_ITEMS} more")
    return line


def _jobs_sentence(jobs: list[WorkerJob], unplaced: bool) -> list[Inline]:
    n = len(jobs)
    longest = max(jobs, key=lambda j: j.longest or 0.0)
    named = {r.compile_id for j in jobs for r in j.reports if r.compile_id}
    whose = "that no compile of this log claims" if unplaced else "of this compile"
    said: list[Inline] = [
        f"The watchdog reported {n} job{'s' if n > 1 else ''} {whose} still running; "
        f"the longest had run {_seconds(longest.longest)} at its last report (line "
        f"{longest.last.line})."
    ]
    if named:
        cut = [[Code(_cut(x))] for x in sorted(named)]
        said += [" The reports name ", *capped_joined(cut), "."]
    if unplaced and any(r.compile_id is None for j in jobs for r in j.reports):
        said.append(" Reports with compile_id null name no compile.")
    return said


def _job_row(job: WorkerJob) -> list[Inlines]:
    last = job.last
    other: dict[str, Any] = {}
    for r in job.reports:
        other.update(r.other_fields)
    lines = ", ".join(str(r.line) for r in job.reports[:8])
    if len(job.reports) > 8:
        lines += f" and {len(job.reports) - 8} more"
    phase: list[Inline] = [Code(_cut(last.phase))] if last.phase else []
    if last.phase and last.phase_elapsed_s is not None:
        phase.append(f" for {_seconds(last.phase_elapsed_s)}")
    return [
        [Code(_cut(_text(job.job_id)))],
        [str(len(job.reports))],
        [_seconds(job.longest)],
        phase,
        [Code(_cut(_text(last.worker_pid)))] if last.worker_pid is not None else [],
        [lines],
        [Code(_cut(json.dumps(other, sort_keys=True, default=str)))] if other else [],
    ]


def _death_blocks(
    plan: TracePlan, frame: FramePlan, death: SidecarDeath, c: Compile
) -> list[Block]:
    said: list[Inline] = [
        f"The compile worker sidecar{_pid(death)} exited{_code(death)} while compiles waited "
        f"on it (line {death.line} of the log)."
    ]
    if death.ended and any(x is c for x in death.ended):
        said.append(" This compile's failure names that process: the death failed it.")
    elif death.ended:
        said += [
            " Failures naming that process: ",
            *capped_joined([[_compile_link(plan, x)] for x in death.ended]),
            ".",
        ]
    else:
        said.append(" No compile's failure in this log names that process.")
    blocks: list[Block] = [Paragraph(said)]
    if death.tail:
        blocks.append(
            Dropdown(
                [f"The worker's last output, as logged (line {death.line})"],
                [CodeBlock(death.tail)],
            )
        )
    return blocks


def _logged_in(death: SidecarDeath, c: Compile) -> bool:
    return any(a.line == death.line for a in c.artifacts_named(DEATH))


def _compile_link(plan: TracePlan, c: Compile) -> Inline:
    frame = plan.frame_for(c)
    return ObjectLink("frame", frame.name) if frame is not None else Code(c.label)


def _pid(death: SidecarDeath) -> str:
    return f" (pid {death.pid})" if death.pid is not None else ""


def _code(death: SidecarDeath) -> str:
    return f" with return code {death.returncode}" if death.returncode is not None else ""


def _seconds(value: float | None) -> str:
    return f"{value:.1f} s" if value is not None else "an unlogged time"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _cut(text: str) -> str:
    return text if len(text) <= VALUE_LIMIT else text[: VALUE_LIMIT - 1] + "…"
