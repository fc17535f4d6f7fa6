"""Full builds of big trace logs beside tlparse: wall, CPU, peak memory and bytes written.

    python benchmarks/bench_sphinx.py [LOG ...] [--baseline REF] [--repeat 3] [-j 1]
                                      [--json OUT]

LOG is any trace log, ``.log.gz`` included (decompressed first, for every tool); without
one, the 36 MB log ``make_big_log.py`` makes with torch.  Logs of 100 and 300 MB:
``python benchmarks/make_big_log.py DIR --corpus --target-mb 100`` (real records, no torch).

For each log, in temporary folders and in one run, ``--repeat`` rounds, interleaved (each
round runs every command once, so a busy or throttled machine slows all alike; the best of
each is compared):

- ``tlparse LOG`` (0.4.3), the reference;
- ``cold``: ``sphinx-build -b html`` (furo) of a page with the ``torchtrace`` directive: no
  output, no generated sources, an empty user cache (``XDG_CACHE_HOME``);
- ``rebuild``: the same build again with nothing changed, and the same two builds of the
  site without the directive, whose difference is the rebuild's overhead;
- ``build``: ``sphinx-torchtrace build LOG -o OUT``, fresh output and cache;
- ``summary``: ``sphinx-torchtrace summary LOG``.

Each command runs in a child process measured by ``os.wait4``: wall seconds, CPU seconds
(user + sys: steadier than wall on a shared machine) and peak RSS.  After the last round,
the bytes the cold build wrote into the docs' source folder (generated sources: issue 56
bounds them at 5 % of the log), into the output (``.doctrees`` apart, and its growth on
the rebuild) and into the user's cache, and ``build``'s project folder, output and cache.

With ``--baseline REF`` (a commit, e.g. ``HEAD~1``), the extension's code at REF (checked
out in a git worktree) runs the same commands in the same rounds, so before/after figures
come from one window.  ``uptime``'s load averages are printed before and after.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_model import BIG_LOG, ensure_big_log  # noqa: E402

CONF = 'extensions = ["sphinx_torchtrace"]\nhtml_theme = "furo"\nproject = "bench"\n'
PAGE = "Compilation report\n==================\n\nSome prose before the report.\n\n"
TASKS = ("tlparse", "cold", "rebuild", "build", "summary")


@dataclass
class Run:
    """One command's cost: wall and CPU seconds, peak resident memory in MB."""

    wall: float
    cpu: float
    rss_mb: float


def measure(cmd: list[str], env: dict[str, str], cwd: Path) -> Run:
    """Run ``cmd`` to its end and measure it alone (``os.wait4``: that child's rusage)."""
    start = time.perf_counter()
    child = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err.decode(errors='replace')[-2000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def folder_bytes(path: Path, skip: tuple[str, ...] = ()) -> int:
    if not path.exists():
        return 0
    return sum(
        p.stat().st_size
        for p in path.rglob("*")
        if p.is_file() and not p.is_symlink() and not any(s in p.parts for s in skip)
    )


@dataclass
class Variant:
    """One version of the extension running every command: its runs and what it wrote."""

    name: str
    base: Path
    log: Path
    code: Path | None
    runs: dict[str, list[Run]] = field(default_factory=dict)
    plain: dict[str, list[Run]] = field(default_factory=dict)  # the site without the trace
    written: dict[str, int] = field(default_factory=dict)

    def env(self, cache: Path) -> dict[str, str]:
        env = dict(os.environ, XDG_CACHE_HOME=str(cache), PYTHONHASHSEED="0")
        env.pop("CI", None)
        if self.code is not None:
            env["PYTHONPATH"] = os.pathsep.join(
                filter(None, [str(self.code), env.get("PYTHONPATH")])
            )
        return env

    def site(self, name: str, with_trace: bool) -> Path:
        src = self.base / name / "src"
        if not src.exists():
            src.mkdir(parents=True)
            (src / "conf.py").write_text(CONF)
            text = PAGE
            if with_trace:
                os.link(self.log, src / "trace.log")  # the user's log: not written by a build
                text += ".. torchtrace:: trace.log\n   :name: bench\n"
            (src / "index.rst").write_text(text)
        return src

    def sphinx(self, src: Path, cache: Path, jobs: int) -> Run:
        # from the site's folder: from the repository, ``python -m`` would put this
        # checkout's package first on sys.path, ahead of a baseline's PYTHONPATH
        cmd = [sys.executable, "-m", "sphinx", "-q", "-b", "html", "-j", str(jobs)]
        return measure([*cmd, str(src), str(src.parent / "out")], self.env(cache), src)

    def add(self, runs: dict[str, list[Run]], task: str, run: Run) -> None:
        runs.setdefault(task, []).append(run)

    def round(self, jobs: int) -> None:
        src = self.site("with", True)
        out, cache = src.parent / "out", src.parent / "cache"
        for path in (out, cache, src / "torchtrace"):  # cold: nothing left of a last round
            shutil.rmtree(path, ignore_errors=True)
        self.add(self.runs, "cold", self.sphinx(src, cache, jobs))
        before = {"conf.py", "index.rst", "trace.log"}
        made = [p for p in src.rglob("*") if p.is_file() and p.name not in before]
        self.written.update(
            source=sum(p.stat().st_size for p in made),
            source_files=len(made),
            output=folder_bytes(out, skip=(".doctrees",)),
            doctrees=folder_bytes(out / ".doctrees"),
            cache=folder_bytes(cache),
        )
        self.add(self.runs, "rebuild", self.sphinx(src, cache, jobs))
        self.written["doctrees_after_rebuild"] = folder_bytes(out / ".doctrees")
        plain = self.site("without", False)
        shutil.rmtree(plain.parent / "out", ignore_errors=True)
        self.add(self.plain, "cold", self.sphinx(plain, plain.parent / "cache", jobs))
        self.add(self.plain, "rebuild", self.sphinx(plain, plain.parent / "cache", jobs))

        cli = [sys.executable, "-m", "sphinx_torchtrace"]
        work = self.base / "cli"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        env = self.env(work / "cache")
        build = [*cli, "build", str(self.log), "-o", str(work / "out"), "--no-browser", "-q"]
        self.add(self.runs, "build", measure(build, env, work))
        projects = work / "cache" / "sphinx-torchtrace" / "projects"
        self.written.update(
            build_project=folder_bytes(projects),
            build_output=folder_bytes(work / "out"),
            build_cache=folder_bytes(work / "cache") - folder_bytes(projects),
        )
        self.add(self.runs, "summary", measure([*cli, "summary", str(self.log)], env, work))


def tlparse_run(log: Path, out: Path) -> Run | None:
    tlparse = shutil.which("tlparse")
    if not tlparse:
        return None
    cmd = [tlparse, str(log), "-o", str(out), "--overwrite", "--no-browser"]
    return measure(cmd, dict(os.environ), out.parent)


def worktree(ref: str, where: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), ref],
        check=True,
        capture_output=True,
    )
    return where


def best(runs: list[Run]) -> Run:
    """The best of each figure over the rounds (each its own minimum: noise only adds)."""
    return Run(min(r.wall for r in runs), min(r.cpu for r in runs), min(r.rss_mb for r in runs))


def load() -> str:
    return ", ".join(f"{n:.1f}" for n in os.getloadavg())


def report(log_name: str, size: int, tl: list[Run], variants: list[Variant], rounds: int) -> dict:
    mb = size / 1e6
    print(f"\n## {log_name}: {mb:.1f} MB, best of {rounds} interleaved rounds")
    print(
        "\n| command | wall s | CPU s | CPU s/MB | CPU / tlparse | peak RSS MB | "
        "CPU runs |\n|---|---|---|---|---|---|---|"
    )
    tb = best(tl) if tl else None

    def row(name: str, runs: list[Run]) -> None:
        b = best(runs)
        ratio = f"{b.cpu / tb.cpu:.1f}x" if tb else "n/a"
        each = ", ".join(f"{r.cpu:.1f}" for r in runs)
        print(
            f"| {name} | {b.wall:.2f} | {b.cpu:.2f} | {b.cpu / mb:.3f} | {ratio} | "
            f"{b.rss_mb:.0f} | {each} |"
        )

    if tl:
        row("tlparse 0.4.3", tl)
    out: dict = {"log": log_name, "bytes": size, "rounds": rounds}
    if tb:
        out["tlparse"] = asdict(tb)
    for v in variants:
        prefix = "" if len(variants) == 1 else f"{v.name}: "
        row(f"{prefix}cold sphinx-build", v.runs["cold"])
        row(f"{prefix}no-change rebuild", v.runs["rebuild"])
        row(f"{prefix}sphinx-torchtrace build", v.runs["build"])
        row(f"{prefix}sphinx-torchtrace summary", v.runs["summary"])
        row(f"{prefix}site without the trace: cold", v.plain["cold"])
        row(f"{prefix}site without the trace: rebuild", v.plain["rebuild"])
        over = best(v.runs["rebuild"]).wall - best(v.plain["rebuild"]).wall
        over_cpu = best(v.runs["rebuild"]).cpu - best(v.plain["rebuild"]).cpu
        w = v.written
        print(
            f"\n{prefix}rebuild overhead {over:+.2f} s wall, {over_cpu:+.2f} s CPU (target "
            f"<= +1 s). Written by the cold build: into the docs' source folder "
            f"{w['source'] / 1e6:.2f} MB in "
            f"{w['source_files']} files ({100 * w['source'] / size:.1f} % of the log; target "
            f"<= 5 %), output {w['output'] / 1e6:.1f} MB, .doctrees {w['doctrees'] / 1e6:.1f} MB "
            f"({w['doctrees_after_rebuild'] / 1e6:.1f} MB after the rebuild), user cache "
            f"{w['cache'] / 1e6:.1f} MB. `build`: project folder {w['build_project'] / 1e6:.1f} "
            f"MB (its sources and doctrees), output {w['build_output'] / 1e6:.1f} MB, other "
            f"cache {w['build_cache'] / 1e6:.1f} MB."
        )
        out[v.name] = {
            **{t: asdict(best(v.runs[t])) for t in v.runs},
            **{f"plain_{t}": asdict(best(v.plain[t])) for t in v.plain},
            "written": w,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("logs", nargs="*", type=Path)
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("-r", "--repeat", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--baseline", help="a git ref whose extension code runs alongside")
    parser.add_argument("--json", type=Path, help="also write the best figures here")
    args = parser.parse_args()
    logs = args.logs or [ensure_big_log() or BIG_LOG]
    print(f"load average before: {load()} on {os.cpu_count()} CPUs")
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-sphinx-") as tmp:
        base = Path(tmp)
        code = worktree(args.baseline, base / "baseline-code") if args.baseline else None
        try:
            for i, log in enumerate(logs):
                if not log.exists():
                    raise SystemExit(f"no log to build: {log}")
                here = base / f"log{i}"
                here.mkdir()
                plain = here / log.name.removesuffix(".gz")
                if log.name.endswith(".gz"):  # tlparse reads plain files: all read the same
                    with gzip.open(log) as f, plain.open("wb") as g:
                        shutil.copyfileobj(f, g)
                else:
                    try:
                        os.link(log, plain)
                    except OSError:  # another file system
                        shutil.copy(log, plain)
                variants = [Variant("this code", here / "this", plain, None)]
                if code is not None:
                    variants.append(
                        Variant(f"baseline {args.baseline}", here / "base", plain, code)
                    )
                tl: list[Run] = []
                for _ in range(max(1, args.repeat)):
                    run = tlparse_run(plain, here / "tl")
                    if run:
                        tl.append(run)
                    for variant in variants:
                        variant.round(args.jobs)
                results.append(
                    report(log.name, plain.stat().st_size, tl, variants, max(1, args.repeat))
                )
                shutil.rmtree(here, ignore_errors=True)
        finally:
            if code is not None:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(code)],
                    capture_output=True,
                )
    print(f"\nload average after: {load()}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
