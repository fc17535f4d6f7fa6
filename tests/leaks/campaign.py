"""The campaign: inputs of every kind in turn until enough canaries, in parts (worker
processes), its figures and the first survivor of each class."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .inputs import (
    generate,
)
from .oracle import (
    OUTPUTS,
    Outcome,
    run_input,
)
from .places import (
    KINDS,
    LONG,
    PER_INPUT,
    ROOT,
    TEXT_LONG,
)
from .shapes import (
    SHAPES,
)

# -- the campaign ------------------------------------------------------------------------------


@dataclass
class Report:
    """Figures of a campaign (or of one worker's part of it)."""

    seed: int = 0
    inputs: int = 0
    planted: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # kind, place, shape
    survived: Counter[tuple[str, str, str, str]] = field(
        default_factory=Counter
    )  # output, kind, place, shape
    examples: dict[tuple[str, str, str, str], dict[str, Any]] = field(default_factory=dict)
    status: Counter[tuple[str, str, int]] = field(default_factory=Counter)  # kind, command, exit
    breaches: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: Counter[str] = field(default_factory=Counter)  # per kind
    errors: list[str] = field(default_factory=list)  # the campaign's own failures

    @property
    def canaries(self) -> int:
        return sum(self.planted.values())

    @property
    def survivors(self) -> int:
        return sum(self.survived.values())

    def add(self, outcome: Outcome) -> None:
        self.inputs += 1
        by_uid = {c.uid: c for c in outcome.canaries}
        for c in outcome.canaries:
            self.planted[(c.kind, c.label(), c.shape)] += 1
        counted: set[tuple[int, str]] = set()
        for s in outcome.survivors:
            if (s.uid, s.output) in counted:
                continue  # once per output (check: not listed, and its name printed)
            counted.add((s.uid, s.output))
            c = by_uid[s.uid]
            key = (s.output, c.kind, c.label(), c.shape)
            self.survived[key] += 1
            if key not in self.examples:
                self.examples[key] = {
                    "input": outcome.n,
                    "canary": c.uid,
                    "text": c.text,
                    "written": c.written,
                    "file": c.file,
                    "line": c.line,
                    "companion": c.companion,
                    "survived in": s.where,
                    "found": s.how,
                    "snippet": s.snippet,
                }
        for cmd, rc in outcome.status.items():
            self.status[(outcome.kind, cmd, rc)] += 1
        self.breaches += [f"input {outcome.n} ({outcome.kind}): {b}" for b in outcome.breaches]
        self.notes += [f"input {outcome.n} ({outcome.kind}): {b}" for b in outcome.notes]
        self.seconds[outcome.kind] += outcome.seconds

    def merge(self, other: Report) -> None:
        self.inputs += other.inputs
        self.planted.update(other.planted)
        self.survived.update(other.survived)
        for k, v in other.examples.items():
            self.examples.setdefault(k, v)
        self.status.update(other.status)
        self.breaches += other.breaches
        self.notes += other.notes
        self.seconds.update(other.seconds)
        self.errors += other.errors

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "inputs": self.inputs,
            "planted": [[*k, v] for k, v in sorted(self.planted.items())],
            "survived": [[*k, v] for k, v in sorted(self.survived.items())],
            "examples": [[*k, v] for k, v in sorted(self.examples.items())],
            "status": [[*k, v] for k, v in sorted(self.status.items())],
            "breaches": self.breaches,
            "notes": self.notes,
            "seconds": dict(self.seconds),
            "errors": self.errors,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        r = cls(seed=data["seed"], inputs=data["inputs"])
        r.planted = Counter({tuple(x[:-1]): x[-1] for x in data["planted"]})  # type: ignore[misc]
        r.survived = Counter({tuple(x[:-1]): x[-1] for x in data["survived"]})  # type: ignore[misc]
        r.examples = {tuple(x[:-1]): x[-1] for x in data["examples"]}  # type: ignore[misc]
        r.status = Counter({tuple(x[:-1]): x[-1] for x in data["status"]})  # type: ignore[misc]
        r.breaches, r.notes, r.errors = data["breaches"], data["notes"], data["errors"]
        r.seconds = Counter(data["seconds"])
        return r


def schedule(canaries: int, kinds: Sequence[str], scale: float) -> list[tuple[int, str, int]]:
    """The campaign's inputs: (number, kind, canaries), kinds in turn, until enough and
    every kind once."""
    out: list[tuple[int, str, int]] = []
    total = 0
    n = 0
    while total < canaries or n < len(kinds):  # every kind at least once
        kind = kinds[n % len(kinds)]
        count = (
            max(len(SHAPES), int(PER_INPUT[kind] * scale))
            if kind not in (LONG, TEXT_LONG)
            else PER_INPUT[kind]
        )
        out.append((n, kind, count))
        total += count
        n += 1
    return out


def one_input(
    n: int,
    kind: str,
    count: int,
    seed: int,
    work: Path,
    build: bool = True,
    shapes: Sequence[str] = (),
) -> Outcome:
    work.mkdir(parents=True, exist_ok=True)
    inp = generate(n, kind, seed, count, work, shapes)
    return run_input(inp, work, build)


def shapes_of(args: argparse.Namespace) -> list[str]:
    """The shapes planted: ``--shapes`` (all by default) less ``--skip-shapes``."""
    chosen = [s.strip() for s in args.shapes.split(",") if s.strip()] or list(SHAPES)
    skipped = {s.strip() for s in args.skip_shapes.split(",") if s.strip()}
    unknown = (set(chosen) | skipped) - set(SHAPES)
    if unknown:
        raise SystemExit(f"unknown shapes {sorted(unknown)}: give some of {', '.join(SHAPES)}")
    return [s for s in chosen if s not in skipped]


def run_part(args: argparse.Namespace, jobs: Sequence[tuple[int, str, int]]) -> Report:
    report = Report(seed=args.seed)
    keep = Path(args.keep) if args.keep else None
    cache_home = os.environ.get("XDG_CACHE_HOME")
    with tempfile.TemporaryDirectory(prefix="torchtrace-leaks-") as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")  # builds keep their projects here
        try:
            _run_jobs(args, jobs, report, keep, Path(tmp))
        finally:
            if cache_home is None:
                os.environ.pop("XDG_CACHE_HOME", None)
            else:
                os.environ["XDG_CACHE_HOME"] = cache_home
    return report


def _run_jobs(
    args: argparse.Namespace,
    jobs: Sequence[tuple[int, str, int]],
    report: Report,
    keep: Path | None,
    tmp: Path,
) -> None:
    for i, (n, kind, count) in enumerate(jobs):
        work = (keep / f"input-{n}") if keep else tmp / f"input-{n}"
        shutil.rmtree(work, ignore_errors=True)
        try:
            outcome = one_input(n, kind, count, args.seed, work, not args.no_build, shapes_of(args))
        except Exception:  # noqa: BLE001 - the campaign's own failure, said in the report
            report.errors.append(f"input {n} ({kind}):\n{traceback.format_exc()}")
            continue
        finally:
            if not keep:
                shutil.rmtree(work, ignore_errors=True)
        report.add(outcome)
        if args.progress:
            print(
                f"input {n} ({kind}): {len(outcome.canaries)} canaries, "
                f"{len(outcome.survivors)} survived, {outcome.seconds:.1f} s "
                f"({', '.join(f'{k} {v:.1f}' for k, v in outcome.steps.items())}) "
                f"[{i + 1}/{len(jobs)}]",
                file=sys.stderr,
                flush=True,
            )


def campaign(args: argparse.Namespace) -> Report:
    """The whole campaign, in ``--workers`` processes (each a part of the inputs)."""
    kinds = [k.strip() for k in args.kinds.split(",")] if args.kinds else list(KINDS)
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise SystemExit(f"unknown kinds {sorted(unknown)}: give some of {', '.join(KINDS)}")
    jobs = schedule(args.canaries, kinds, args.scale)
    if args.only is not None:
        jobs = [j for j in jobs if j[0] == args.only] or [
            (args.only, kinds[args.only % len(kinds)], PER_INPUT[kinds[args.only % len(kinds)]])
        ]
    if args.worker is not None:
        return run_part(args, jobs[args.worker :: args.workers])
    if args.workers <= 1:
        return run_part(args, jobs)
    import subprocess

    with tempfile.TemporaryDirectory(prefix="torchtrace-leak-parts-") as tmp:
        procs = []
        for w in range(args.workers):
            part = Path(tmp) / f"part-{w}.json"
            given = sys.argv[1:] if args.argv is None else args.argv
            argv = [sys.executable, "-m", "tests.leaks", *given]
            worker = [*argv, "--worker", str(w), "--save", str(part), "--quiet"]
            procs.append((subprocess.Popen(worker, cwd=ROOT), part))
        report = Report(seed=args.seed)
        for proc, part in procs:
            proc.wait()
            if part.is_file():
                report.merge(Report.from_json(json.loads(part.read_text())))
            else:
                report.errors.append(f"a worker ended with {proc.returncode} and no figures")
        return report


def _table(rows: list[list[Any]], head: list[str]) -> list[str]:
    """Columns: numbers to the right, words to the left."""
    cols = list(zip(head, *rows, strict=False))
    widths = [max(len(str(x)) for x in col) for col in cols]
    numeric = [all(re.fullmatch(r"[\d/.]+", str(x)) for x in col[1:]) for col in cols]
    fmt = "  ".join(f"{{:{'>' if n else '<'}{w}}}" for n, w in zip(numeric, widths, strict=True))
    return [fmt.format(*head).rstrip(), *(fmt.format(*map(str, r)).rstrip() for r in rows)]


def print_report(report: Report, seconds: float, examples: bool = True) -> None:
    """The figures: canaries planted, survivors by shape, place, kind and class (output,
    shape, place) with the first of each class written out, and what else broke."""
    say = print
    say(
        f"leak campaign: seed {report.seed}, {report.inputs} inputs, {report.canaries} "
        f"canaries ({len({k[2] for k in report.planted})} shapes, "
        f"{len({k[1] for k in report.planted})} places, "
        f"{len({k[0] for k in report.planted})} input kinds), {seconds:.0f} s; "
        f"survivors: {report.survivors} ("
        + ", ".join(
            f"{o} {sum(v for k, v in report.survived.items() if k[0] == o)}" for o in OUTPUTS
        )
        + ")"
    )
    for title, index in (("input kind", 0), ("shape", 2), ("place", 1)):
        planted: Counter[str] = Counter()
        lost: dict[str, Counter[str]] = defaultdict(Counter)
        for k, v in report.planted.items():
            planted[k[index]] += v
        for k, v in report.survived.items():
            lost[k[index + 1]][k[0]] += v
        say(f"\nsurvivors by {title} (canaries not listed by check / left in each output):")
        rows = [
            [name, planted[name], *(lost[name][o] for o in OUTPUTS)] for name in sorted(planted)
        ]
        if index == 0:
            rows = [[*row, f"{report.seconds[row[0]]:.0f}"] for row in rows]
        head = [title, "planted", *OUTPUTS] + (["seconds"] if index == 0 else [])
        for line in _table(rows, head):
            say("  " + line)
    say("\nexit statuses (input kind, command: status x inputs):")
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for (kind, cmd, rc), v in sorted(report.status.items()):
        grouped[(kind, cmd)].append(f"{rc} x{v}")
    for (kind, cmd), items in sorted(grouped.items()):
        say(f"  {kind:<20} {cmd:<7} {', '.join(items)}")
    classes: Counter[tuple[str, str, str]] = Counter()
    planted_by: Counter[tuple[str, str]] = Counter()
    kinds_of: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for (_, place, shape), v in report.planted.items():
        planted_by[(shape, place)] += v
    for (o, kind, place, shape), v in report.survived.items():
        classes[(o, shape, place)] += v
        kinds_of[(o, shape, place)].add(kind)
    if classes:
        say(f"\nsurvivor classes (output, shape, place): {len(classes)}")
        rows = [
            [
                o,
                shape,
                place,
                f"{v}/{planted_by[(shape, place)]}",
                ", ".join(sorted(kinds_of[(o, shape, place)])),
            ]
            for (o, shape, place), v in sorted(classes.items())
        ]
        for line in _table(rows, ["output", "shape", "place", "survived", "input kinds"]):
            say("  " + line)
    if examples and report.examples:
        say("\nthe first survivor of each class:")
        shown: set[tuple[str, str, str]] = set()
        for (o, kind, place, shape), ex in sorted(report.examples.items()):
            if (o, shape, place) in shown:
                continue
            shown.add((o, shape, place))
            guard = f" (its guard {ex['companion']})" if ex["companion"] else ""
            where = f"{ex['file']}:{ex['line']}{guard}"
            say(f"  [{o} | {shape} | {place}] {kind} input {ex['input']}: {where}")
            say(f"      planted: {ex['text'][:300]!r}")
            if ex["written"] and ex["written"] != ex["text"]:
                say(f"      written: {ex['written'][:300]!r}")
            found = f" ({ex['found']}): {ex['snippet']!r}" if ex["found"] else ""
            say(f"      left in: {ex['survived in']}{found}")
    for title, items in (
        ("breaches (not a canary)", report.breaches),
        ("generator notes", report.notes),
        ("campaign errors", report.errors),
    ):
        if items:
            say(f"\n{title}: {len(items)}")
            for item in items[:40]:
                say("  " + item.replace("\n", "\n  "))


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    p.add_argument("--canaries", type=int, default=50_000, help="canaries planted, at least")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--kinds", default="", help=f"comma list of input kinds (default all: {', '.join(KINDS)})"
    )
    p.add_argument("--shapes", default="", help="comma list of shapes (default all)")
    p.add_argument("--skip-shapes", default="", help="comma list of shapes left out")
    p.add_argument("--scale", type=float, default=1.0, help="canaries per input, times this")
    p.add_argument("--no-build", action="store_true", help="leave out the default build")
    p.add_argument("--only", type=int, help="input N alone")
    p.add_argument("--keep", help="keep each input and its outputs under this folder")
    p.add_argument("--workers", type=int, default=1, help="processes sharing the inputs")
    p.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    p.add_argument("--save", help="write the figures (and an example of each class) as JSON")
    p.add_argument("--merge", nargs="+", help="print the figures of parts saved apart")
    p.add_argument("--progress", action="store_true", help="a line per input on stderr")
    p.add_argument("--quiet", action="store_true", help="no report printed")
    args = p.parse_args(argv)
    args.argv = list(argv) if argv is not None else None
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    if args.merge:
        report = Report()
        for path in args.merge:
            part = Report.from_json(json.loads(Path(path).read_text()))
            report.seed = part.seed
            report.merge(part)
    else:
        report = campaign(args)
    if args.save:
        Path(args.save).write_text(
            json.dumps(report.to_json(), indent=1, ensure_ascii=False) + "\n"
        )
    if not args.quiet:
        print_report(report, time.monotonic() - started)
    return 1 if report.survivors or report.breaches or report.errors else 0
