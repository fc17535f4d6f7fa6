"""Inductor's compile workers (torch 2.14+): jobs still running past the watchdog's
interval, and a worker process that died.

Two ``artifact`` records, shaped by torch's ``_inductor/compile_worker/subproc_pool.py``:

* ``compile_worker_status`` (JSON): the sidecar's watchdog reports a job still running,
  ``{"job_id", "elapsed_s", "phase", "phase_elapsed_s", "worker_pid", "compile_id"}`` (the
  phase fields only where heartbeats are on).  It is logged from a thread with no compile
  context, so its compile id is in the payload (torch's ``0/1`` form), never the envelope:
  the builder places it under that compile (:data:`..inputs.builder.PAYLOAD_COMPILE_IDS`).
  Each report of one job repeats with a growing ``elapsed_s``.
* ``compile_worker_sidecar_death`` (text): ``sidecar pid=P returncode=R`` and the tail of
  the worker's log.  It names no compile: torch fails every pending compile with a
  ``RuntimeError`` that names the same pid, so a compile whose failure names it is one the
  death ended (said where the log says so, and only there).

Every field of a report is kept, those this module does not read included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..model import Artifact, Compile, RankTrace

STATUS = "compile_worker_status"
DEATH = "compile_worker_sidecar_death"
#: Fields of a status report this module reads; any other is shown as logged.
READ_FIELDS = ("job_id", "elapsed_s", "phase", "phase_elapsed_s", "worker_pid", "compile_id")
_DEATH_HEAD = re.compile(r"sidecar pid=(-?\d{1,12}) returncode=(-?\d{1,12})")
#: Characters of a dead worker's log tail kept for a page.
TAIL_LIMIT = 4000


@dataclass(slots=True)
class WorkerReport:
    """One watchdog report of a job still running."""

    line: int
    job_id: Any
    elapsed_s: float | None
    phase: str | None
    phase_elapsed_s: float | None
    worker_pid: Any
    compile_id: str | None  # as the payload names it
    other_fields: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class WorkerJob:
    """The reports of one job of one compile: the last says how long it had run."""

    job_id: Any
    reports: list[WorkerReport]

    @property
    def last(self) -> WorkerReport:
        return self.reports[-1]

    @property
    def longest(self) -> float | None:
        times = [r.elapsed_s for r in self.reports if r.elapsed_s is not None]
        return max(times) if times else None


@dataclass(slots=True)
class SidecarDeath:
    """A compile worker sidecar that exited while compiles waited on it."""

    line: int
    pid: int | None
    returncode: int | None
    tail: str
    #: Compiles of the rank whose failure names this pid, in log order.
    ended: list[Compile] = field(default_factory=list)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if value == value and abs(value) < 1e12 else None


def _report(artifact: Artifact) -> WorkerReport | None:
    data = artifact.json_object()
    if data is None:
        return None
    phase = data.get("phase")
    named = data.get("compile_id")
    return WorkerReport(
        line=artifact.line,
        job_id=data.get("job_id"),
        elapsed_s=_number(data.get("elapsed_s")),
        phase=phase if isinstance(phase, str) else None,
        phase_elapsed_s=_number(data.get("phase_elapsed_s")),
        worker_pid=data.get("worker_pid"),
        compile_id=named if isinstance(named, str) else None,
        other_fields={k: v for k, v in data.items() if k not in READ_FIELDS},
    )


def compile_jobs(c: Compile) -> list[WorkerJob]:
    """The jobs of a compile that the watchdog reported still running, by job id in the
    order first reported; a report whose payload is no JSON object is left out here (the
    artifact stays in the compile's table)."""
    jobs: dict[str, WorkerJob] = {}
    for artifact in c.artifacts_named(STATUS):
        report = _report(artifact)
        if report is None:
            continue
        key = repr(report.job_id)
        job = jobs.get(key)
        if job is None:
            jobs[key] = WorkerJob(report.job_id, [report])
        else:
            job.reports.append(report)
    return list(jobs.values())


def sidecar_deaths(rank: RankTrace) -> list[SidecarDeath]:
    """Every sidecar death the rank logged, with the compiles whose failure names its pid."""
    deaths: list[SidecarDeath] = []
    for c in rank.compiles:
        for artifact in c.artifacts_named(DEATH):
            text = artifact.text()
            head = _DEATH_HEAD.search(text[:400])
            pid = int(head.group(1)) if head else None
            code = int(head.group(2)) if head else None
            tail = text[head.end() :].strip("\n") if head else text
            deaths.append(SidecarDeath(artifact.line, pid, code, tail[-TAIL_LIMIT:]))
    for death in deaths:
        if death.pid is None:
            continue
        needle = f"sidecar (pid {death.pid}) exited"
        death.ended = [c for c in rank.compiles if any(needle in f.reason for f in c.failures)]
    return deaths


def death_of(rank: RankTrace, c: Compile) -> SidecarDeath | None:
    """The sidecar death a compile's failure names, if any (the rank is read only for a
    compile whose failure names a sidecar: a page per compile stays linear)."""
    if not any("compile worker sidecar (pid" in f.reason for f in c.failures):
        return None
    return next((d for d in sidecar_deaths(rank) if any(x is c for x in d.ended)), None)
