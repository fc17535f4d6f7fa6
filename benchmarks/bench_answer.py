"""How fast the terminal answer comes: ``summary`` and ``build`` beside ``tlparse``, in one run.

    python benchmarks/bench_answer.py [LOG ...] [--repeat 5] [--as-is]

For each log (by default two logs of 0.4 MB: :data:`SAMPLE`), decompressed first
(tlparse reads plain files), each command runs in a child process ``--repeat`` rounds,
interleaved, so that a busy spell of the machine hits every command alike:

- ``tlparse LOG -o OUT --overwrite --no-browser``: the reference;
- ``sphinx-torchtrace summary LOG``: the quick answer;
- ``sphinx-torchtrace build LOG`` cold: a new output folder and a new cache folder
  (``XDG_CACHE_HOME``), as the first build of a log;
- ``sphinx-torchtrace build LOG`` again: the same folders, as a second look;
- the floor: ``sphinx-build`` of a one-page project with the same theme and no extension,
  what Sphinx and the theme cost before any of ours.

Each row gives the best and the median of the rounds, in wall seconds and in CPU seconds
(user + system of the child, from ``getrusage``): on a shared machine the wall time says
what a user waited, the CPU time what the command cost.  The load average before and after
is printed with the table.  Compiled bytecode is used as an installed package has it (the
package is compiled first, ``PYTHONDONTWRITEBYTECODE`` unset for the children) unless
``--as-is`` runs the children in this environment unchanged.
"""

from __future__ import annotations

import argparse
import compileall
import gzip
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
PAIRS = DATA / "captured" / "pairs" / "compile_error"
#: Logs of about 0.4 MB: one without failures, and one whose compile failed.
SAMPLE = (
    DATA / "shared" / "simple" / "dedicated_log_torch_trace_5aek85xk.log",
    PAIRS / "new" / "dedicated_log_torch_trace_h_z7bym5.log",
)
COMMANDS = ("tlparse", "summary", "build cold", "build again", "floor")


def child_env(as_is: bool) -> dict[str, str]:
    env = dict(os.environ)
    if not as_is:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("CI", None)
    return env


def plain_copy(log: Path, folder: Path) -> Path:
    """The log decompressed into ``folder`` (the same bytes for every command)."""
    name = log.name.removesuffix(".gz")
    out = folder / name
    opened = gzip.open(log) if log.suffix == ".gz" else log.open("rb")
    with opened as src, out.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def floor_project(folder: Path, theme: str) -> Path:
    src = folder / "floor"
    src.mkdir()
    (src / "conf.py").write_text(f'project = "bench"\nhtml_theme = "{theme}"\n')
    (src / "index.rst").write_text("Report\n======\n\nA paragraph.\n")
    return src


def timed(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``argv``; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def commands(
    log: Path, work: Path, floor: Path, tlparse: str, round_: int
) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Each command's argv and extra environment, for one round."""
    ours = [sys.executable, "-m", "sphinx_torchtrace"]
    cold, warm = work / f"cold-{round_}", work / "warm"
    build = [*ours, "build", str(log), "--no-browser", "-q", "-o"]
    sphinx_build = [sys.executable, "-m", "sphinx", "-q", "-E", "-b", "html"]
    return {
        "tlparse": ([tlparse, str(log), "-o", str(work / "tl"), "--overwrite", "--no-browser"], {}),
        "summary": ([*ours, "summary", str(log)], {}),
        "build cold": ([*build, str(cold / "out")], {"XDG_CACHE_HOME": str(cold / "cache")}),
        "build again": ([*build, str(warm / "out")], {"XDG_CACHE_HOME": str(warm / "cache")}),
        "floor": ([*sphinx_build, str(floor), str(work / "fl")], {}),
    }


def bench(log: Path, repeat: int, theme: str, as_is: bool) -> dict[str, list[tuple[float, float]]]:
    tlparse = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    env = child_env(as_is)
    found: dict[str, list[tuple[float, float]]] = {c: [] for c in COMMANDS}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        plain = plain_copy(log, work)
        floor = floor_project(work, theme)
        first = commands(plain, work, floor, tlparse, -1)  # the warm build's first build
        timed(first["build again"][0], {**env, **first["build again"][1]})
        for round_ in range(repeat):
            for name, (argv, extra) in commands(plain, work, floor, tlparse, round_).items():
                found[name].append(timed(argv, {**env, **extra}))
    return found


def row(log: Path, name: str, runs: list[tuple[float, float]]) -> str:
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    return (
        f"| {log.name} | {name} | {min(walls):.2f} | {statistics.median(walls):.2f} "
        f"| {min(cpus):.2f} | {statistics.median(cpus):.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("logs", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--theme", default="furo")
    parser.add_argument(
        "--as-is", action="store_true", help="run the children in this environment unchanged"
    )
    args = parser.parse_args()
    if not args.as_is:
        compileall.compile_dir(str(ROOT / "sphinx_torchtrace"), quiet=1)
    logs = args.logs or list(SAMPLE)
    import sphinx

    print(
        f"Python {platform.python_version()}, Sphinx {sphinx.__version__}, theme {args.theme}, "
        f"{os.cpu_count()} CPUs, {args.repeat} rounds, "
        f"{'this environment as is' if args.as_is else 'compiled bytecode'}"
    )
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print("| log | command | best wall s | median wall s | best CPU s | median CPU s |")
    print("|---|---|---|---|---|---|")
    for log in logs:
        size = os.path.getsize(log)
        found = bench(log, args.repeat, args.theme, args.as_is)
        for name in COMMANDS:
            print(row(log, name, found[name]), flush=True)
        print(f"<!-- {log.name}: {size:,} bytes on disk -->")
    print()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
