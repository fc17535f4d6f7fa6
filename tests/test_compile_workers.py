"""Compile workers (torch 2.14+) on a real log with their records added.

No log we have holds them (torch 2.13 logs none), so the records are written here in the
shape torch's ``_inductor/compile_worker/subproc_pool.py`` logs them, into the shared
``simple`` log (torch 2.13): ``compile_worker_status`` (JSON, ``suppress_context=True``: no
compile id in the envelope, ``"compile_id": "0/0"`` in the payload, reported again as the
job runs on) inside the compile, and ``compile_worker_sidecar_death`` (text ``sidecar
pid=P returncode=R`` and the worker's log tail, logged from the health thread: a
``stack``, no compile id) after it, then a compile failed with the ``RuntimeError`` torch
raises for its pending jobs, which names the pid.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.workers import compile_jobs, death_of, sidecar_deaths

from .conftest import SIMPLE_LOG, copy_testroot, page_words, warnings_of

PREFIX = "V1121 11:51:00.000000 5896 torch/_inductor/compile_worker/subproc_pool.py:{}] "
DEATH_TEXT = (
    "Inductor compile worker sidecar (pid 4242) exited unexpectedly with code -9 during "
    "compilation. Re-run with TORCHINDUCTOR_COMPILE_THREADS=1 to compile in the main process."
)


def _record(line_no: int, envelope: dict[str, object], payload: str) -> list[str]:
    envelope = {**envelope, "has_payload": hashlib.md5(payload.encode()).hexdigest()}
    return [PREFIX.format(line_no) + json.dumps(envelope), *("\t" + p for p in payload.split("\n"))]


def _status(job: int, elapsed: float, extra: dict[str, object]) -> list[str]:
    meta = {"artifact": {"name": "compile_worker_status", "encoding": "json"}}
    payload = {"job_id": job, "elapsed_s": elapsed, **extra, "compile_id": "0/0"}
    return _record(420, meta, json.dumps(payload))


def worker_log(folder: Path) -> Path:
    """The shared simple log with compile workers' records, as torch 2.14 writes them."""
    lines = SIMPLE_LOG.read_text(encoding="utf-8").split("\n")
    metrics = next(i for i, line in enumerate(lines) if '{"compilation_metrics"' in line)
    heartbeat = {"phase": "compile", "phase_elapsed_s": 55.5, "worker_pid": 5901}
    statuses = [
        *_status(0, 60.1, heartbeat),
        *_status(0, 120.3, {**heartbeat, "phase_elapsed_s": 115.7, "queue_depth": 3}),
        *_status(1, 60.0, {"phase": "queued"}),
    ]
    death_meta = {
        "artifact": {"name": "compile_worker_sidecar_death", "encoding": "string"},
        "stack": [{"line": 1, "name": "_health_monitor", "filename": 1}],
    }
    death = _record(640, death_meta, "sidecar pid=4242 returncode=-9\n\nKilled\nworker log tail")
    failed = {
        "compilation_metrics": {
            "compile_id": "1/0",
            "fail_type": "RuntimeError",
            "fail_reason": DEATH_TEXT,
        },
        "frame_id": 1,
        "frame_compile_id": 0,
        "attempt": 0,
    }
    failure = [PREFIX.format(2009) + json.dumps(failed)]
    body = lines[:metrics] + statuses + lines[metrics:]
    while body and not body[-1]:
        body.pop()
    path = folder / "dedicated_log_torch_trace_workers.log"
    path.write_text("\n".join([*body, *death, *failure]) + "\n", encoding="utf-8")
    return path


def test_worker_reports_are_placed_under_the_compile_their_payload_names(tmp_path: Path) -> None:
    rank = load_trace(worker_log(tmp_path)).ranks[0]
    assert not rank.diagnostics  # md5s and JSON as torch writes them
    c = rank.compile("[0/0]")
    jobs = compile_jobs(c)
    assert [(j.job_id, len(j.reports), j.longest) for j in jobs] == [(0, 2, 120.3), (1, 1, 60.0)]
    assert jobs[0].last.phase == "compile" and jobs[0].last.worker_pid == 5901
    assert jobs[0].reports[1].other_fields == {"queue_depth": 3}  # kept, not dropped
    unknown = [x for x in rank.compiles if x.id.is_unknown]
    assert all(not x.artifacts_named("compile_worker_status") for x in unknown)
    [death] = sidecar_deaths(rank)
    assert (death.pid, death.returncode) == (4242, -9)
    assert "worker log tail" in death.tail
    failed = rank.compile("[1/0]")
    assert [x.label for x in death.ended] == ["[1/0]"]
    found = death_of(rank, failed)
    assert found is not None and found.line == death.line and death_of(rank, c) is None


def test_stuck_and_dead_workers_are_said_on_the_pages(
    make_site: Callable[..., SphinxTestApp], tmp_path: Path
) -> None:
    srcdir = copy_testroot("regions", tmp_path / "workers")
    (srcdir / "logs").mkdir()
    worker_log(srcdir / "logs")
    page = "Workers\n=======\n\n.. torchtrace:: logs/\n   :name: workers\n"
    app = make_site("regions", srcdir=srcdir, pages={"index.rst": page})
    assert warnings_of(app) == ""
    folder = app.outdir / "torchtrace" / "workers"
    glance = page_words(folder / "index.html").split("This is the")[0]
    assert re.search(
        r"Compile workers: 2 jobs of \S+ still running when reported \(the longest 120\.3 s, "
        r"line \d+\); the compile worker sidecar \(pid 4242\) died with return code -9 "
        r"\(line \d+\), failing \S+",
        glance,
    ), glance
    pages = {p.name: page_words(p) for p in folder.glob("*.html")}
    [first] = [t for t in pages.values() if "The watchdog reported 2 jobs of this compile" in t]
    assert "the longest had run 120.3 s at its last report" in first
    assert '{"queue_depth": 3}' in first.replace("&quot;", '"')
    [failed] = [t for t in pages.values() if "This compile's failure names that process" in t]
    assert "The compile worker sidecar (pid 4242) exited with return code -9" in failed


REAL = Path(__file__).parent / "data" / "captured" / "newer_torch_t214" / "cold.log"


def unclaimed_log(folder: Path) -> Path:
    """The torch 2.14 capture with its two worker reports naming no compile of the log: the
    first ``"compile_id": null`` (torch's value for a job submitted outside a compile), the
    second ``"9/0"`` (an id the log has no other record of); md5s recomputed as torch would."""
    lines = REAL.read_text(encoding="utf-8").split("\n")
    names = iter(("null", '"9/0"'))
    for i, line in enumerate(lines):
        if '"compile_worker_status"' in line:
            payload = lines[i + 1][1:].replace(
                '"compile_id": "4/0"', f'"compile_id": {next(names)}'
            )
            md5 = hashlib.md5(payload.encode()).hexdigest()
            lines[i] = re.sub(r'"has_payload": "[0-9a-f]{32}"', f'"has_payload": "{md5}"', line)
            lines[i + 1] = "\t" + payload
    path = folder / "dedicated_log_torch_trace_unclaimed.log"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def test_reports_naming_no_compile_of_the_log_stay_without_one(
    make_site: Callable[..., SphinxTestApp], tmp_path: Path
) -> None:
    srcdir = copy_testroot("regions", tmp_path / "unclaimed")
    (srcdir / "logs").mkdir()
    rank = load_trace(unclaimed_log(srcdir / "logs")).ranks[0]
    assert not rank.diagnostics
    # a report is no compile: no [9/0] is made of it, the count of compiles stays the log's
    assert [c.label for c in rank.compiles if "9/" in c.label] == []
    assert len([c for c in rank.compiles if not c.id.is_unknown]) == 10
    [unknown] = [c for c in rank.compiles if c.id.is_unknown]
    assert len(unknown.artifacts_named("compile_worker_status")) == 2
    assert compile_jobs(rank.compile("[4/0]")) == []
    page = "Workers\n=======\n\n.. torchtrace:: logs/\n   :name: unclaimed\n"
    app = make_site("regions", srcdir=srcdir, pages={"index.rst": page})
    assert warnings_of(app) == ""
    folder = app.outdir / "torchtrace" / "unclaimed"
    assert not (folder / "frame-9-0.html").exists()
    glance = page_words(folder / "index.html").split("This is the")[0]
    assert "Compiled: 6 functions (10 compile ids" in glance
    assert re.search(
        r"Compile workers: 1 job whose reports name no compile of this log, still running "
        r"when reported \(the longest 2\.0 s, line \d+\)",
        glance,
    ), glance
    none = page_words(folder / "frame-none.html")
    assert "these name none, or a compile this log has no other record of" in none
    assert "The watchdog reported 1 job that no compile of this log claims still running" in none
    assert "The reports name 9/0 . Reports with compile_id null name no compile." in none
    assert "placed under that compile here" not in none
