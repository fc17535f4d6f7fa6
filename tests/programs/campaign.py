"""The campaign: N generated programs run and compared, the disagreements grouped by class."""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .generator import generate
from .oracle import compare, recheck, run_program, truth_of


@dataclass
class Report:
    seed: int = 0
    programs: int = 0
    calls: int = 0
    compile_ids: int = 0
    #: The programs' own truth: functions compiled, versions made, recompiles, refusals.
    functions: int = 0
    versions: int = 0
    recompiles: int = 0
    refusals: int = 0
    situations: Counter[str] = field(default_factory=Counter)
    tags: Counter[str] = field(default_factory=Counter)
    #: class -> [(program "seed-index", calls, detail)]
    classes: dict[str, list[tuple[str, int, str]]] = field(default_factory=dict)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (program, why)
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # the campaign's processes and every program they ran

    def add(self, part: dict[str, Any]) -> None:
        self.programs += 1
        self.calls += part["calls"]
        self.compile_ids += part["compile_ids"]
        for key in ("functions", "versions", "recompiles", "refusals"):
            setattr(self, key, getattr(self, key) + part.get(key, 0))
        self.situations.update(part["situations"])
        self.tags.update(part["tags"])
        for cls, detail in part["disagreements"]:
            self.classes.setdefault(cls, []).append((part["name"], part["calls"], detail))
        if part["failed"]:
            self.failed.append((part["name"], part["failed"]))

    @property
    def disagreements(self) -> int:
        return sum(len(v) for v in self.classes.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "programs": self.programs,
            "calls": self.calls,
            "compile_ids": self.compile_ids,
            "functions": self.functions,
            "versions": self.versions,
            "recompiles": self.recompiles,
            "refusals": self.refusals,
            "situations": dict(self.situations),
            "tags": dict(self.tags),
            "classes": self.classes,
            "failed": self.failed,
            "seconds": self.seconds,
            "cpu_seconds": self.cpu_seconds,
        }


def _one(
    seed: int, index: int, keep: str | None, full_pages: bool, inductor: float
) -> dict[str, Any]:
    """Program ``index``: run, compared; kept (program, truth, trace) where it disagrees."""
    program = generate(seed, index, inductor)
    name = f"{seed}-{index}"
    with tempfile.TemporaryDirectory(prefix="torchtrace-program-") as tmp:
        workdir = Path(tmp) / name
        run = run_program(program, workdir)
        truth = truth_of(program, run) if run.returncode == 0 and run.calls else None
        try:
            result = compare(program, run, full_pages)
            found = [(d.cls, d.detail) for d in result.disagreements]
            failed, ids = result.failed, result.compile_ids
        except Exception as e:  # our reader broke on a real log: a finding too
            found, failed, ids = [("reader raised", f"{type(e).__name__}: {e}")], None, 0
        if keep and (found or failed):
            dest = Path(keep) / name
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(workdir, dest, ignore=shutil.ignore_patterns("inductor-cache"))
            lines = [f"{cls}: {detail}" for cls, detail in found] + ([failed] if failed else [])
            (dest / "disagreements.txt").write_text("\n".join(lines) + "\n")
    return {
        "name": name,
        "calls": len(run.calls),
        "compile_ids": ids,
        "functions": len(truth.attempted) if truth else 0,
        "versions": sum(truth.versions.values()) if truth else 0,
        "recompiles": sum(truth.recompiles.values()) if truth else 0,
        "refusals": truth.refusals if truth else 0,
        "situations": [s["kind"] for s in program.situations],
        "tags": sorted(program.tags),
        "disagreements": found,
        "failed": failed,
    }


def campaign(args: argparse.Namespace) -> Report:
    report = Report(seed=args.seed)
    started = time.monotonic()
    indices = (
        [args.only]
        if args.only is not None
        else list(range(args.start, args.start + args.programs))
    )
    jobs = [(args.seed, i, args.keep, not args.no_pages, args.inductor) for i in indices]
    if args.workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            for part in pool.map(_one, *zip(*jobs, strict=True)):
                report.add(part)
                _progress(args, report, part)
    else:
        for job in jobs:
            part = _one(*job)
            report.add(part)
            _progress(args, report, part)
    report.seconds = time.monotonic() - started
    report.cpu_seconds = _cpu_seconds()
    return report


def _cpu_seconds() -> float:
    """User and system time of this process and every process it waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _progress(args: argparse.Namespace, report: Report, part: dict[str, Any]) -> None:
    if args.progress:
        mark = "!" if part["disagreements"] or part["failed"] else "."
        print(
            f"{mark} {part['name']} calls {part['calls']} ids {part['compile_ids']} "
            f"{'+'.join(part['situations'])} {len(part['disagreements'])} disagreements",
            file=sys.stderr,
            flush=True,
        )


def print_report(report: Report) -> None:
    print(
        f"{report.programs} programs (seed {report.seed}), {report.calls} calls, "
        f"{report.compile_ids} compile ids, {report.seconds:.0f} s "
        f"({report.cpu_seconds:.0f} CPU s)"
    )
    print(
        f"truth: {report.functions} functions, {report.versions} versions, "
        f"{report.recompiles} recompiles, {report.refusals} refusals"
    )
    print("situations: " + ", ".join(f"{k} {n}" for k, n in sorted(report.situations.items())))
    print("covered: " + ", ".join(f"{k} {n}" for k, n in sorted(report.tags.items())))
    print(f"{report.disagreements} disagreements in {len(report.classes)} classes")
    for cls, found in sorted(report.classes.items(), key=lambda kv: -len(kv[1])):
        smallest = min(found, key=lambda f: f[1])
        programs = len({f[0] for f in found})
        print(
            f"  {cls}: {len(found)} in {programs} programs; smallest {smallest[0]}: {smallest[2]}"
        )
    for name, why in report.failed:
        print(f"  program {name} failed: {why[:300]}")


def _recheck(folders: Sequence[str]) -> int:
    """Each kept program's disagreements now: what a fix left."""
    left = 0
    for folder in folders:
        result = recheck(Path(folder))
        left += len(result.disagreements)
        print(f"{folder}: {len(result.disagreements)} disagreements")
        for d in result.disagreements:
            print(f"  {d}")
    return 1 if left else 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Generated torch programs against what we publish.")
    p.add_argument("--programs", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--start", type=int, default=0, help="the first program's index")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--only", type=int, help="program N alone")
    p.add_argument("--keep", help="keep each program that disagrees (program, truth, trace) here")
    p.add_argument("--inductor", type=float, default=0.05, help="share of inductor functions")
    p.add_argument("--no-pages", action="store_true", help="leave out the frame pages")
    p.add_argument("--save", help="write the figures as JSON")
    p.add_argument("--recheck", nargs="+", help="compare kept programs (folders) again, no torch")
    p.add_argument("--progress", action="store_true", help="a line per program on stderr")
    p.add_argument("--quiet", action="store_true")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.recheck:
        return _recheck(args.recheck)
    report = campaign(args)
    if args.save:
        Path(args.save).write_text(json.dumps(report.to_json(), indent=1) + "\n")
    if not args.quiet:
        print_report(report)
    return 1 if report.disagreements or report.failed else 0
