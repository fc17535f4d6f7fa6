#!/usr/bin/env python3
"""What each build speed-up saves, on real logs (``sphinxext/patches/speedups.py``).

    python benchmarks/bench_speedups.py [LOG ...] [--repeat 3] [--builder html]

For each log, a fresh Sphinx build of a one-trace site (furo when installed, as users
build) with every speed-up, with none (``torchtrace_speedups = False``), and with each
one left out; each build runs in a process of its own (nothing warm), after one untimed
warm-up build, the variants in a shuffled order in each of ``--repeat`` rounds, and the
best time of each kept.  A saving smaller than the spread of repeated builds of one
variant is noise: measure on a quiet machine, on logs of several MB.  The table gives, per
speed-up, the seconds the build takes without it minus with all of them: what keeping
it saves.  Default logs: the bundled traces of 1 MB or more.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ALL = "all"
NONE = "none"


def default_logs() -> list[Path]:
    logs = [
        p
        for p in sorted((ROOT / "tests" / "data").rglob("dedicated_log_torch_trace_*.log*"))
        if p.stat().st_size >= 1 << 20 and "tlparse-inputs" not in p.parts
    ]
    return logs[:3]


def build_once(log: Path, variant: str, builder: str) -> float:
    """Seconds of one fresh build in this process (``variant``: all, none, or the name of
    the one speed-up left out)."""
    from sphinx.application import Sphinx

    from sphinx_torchtrace.sphinxext.patches import speedups

    if variant not in (ALL, NONE):
        speedups.SPEEDUPS.pop(variant)
    with tempfile.TemporaryDirectory(prefix="bench-speedups-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        conf = {"extensions": ["sphinx_torchtrace"], "torchtrace_speedups": variant != NONE}
        try:
            import furo  # noqa: F401

            conf["html_theme"] = "furo"
        except ImportError:
            pass
        (src / "conf.py").write_text(
            "".join(f"{k} = {v!r}\n" for k, v in conf.items()), encoding="utf-8"
        )
        shutil.copyfile(log, src / log.name)
        (src / "index.rst").write_text(
            f"Trace\n=====\n\n.. torchtrace:: {log.name}\n", encoding="utf-8"
        )
        started = time.perf_counter()
        app = Sphinx(
            str(src),
            str(src),
            str(Path(tmp) / "out"),
            str(Path(tmp) / "doctrees"),
            builder,
            status=None,
            warning=None,
            freshenv=True,
        )
        app.build()
        return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--builder", default="html")
    parser.add_argument("--one", nargs=2, metavar=("LOG", "VARIANT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(build_once(Path(args.one[0]), args.one[1], args.builder)))
        return 0
    from sphinx_torchtrace.sphinxext.patches.speedups import SPEEDUPS

    variants = [ALL, NONE, *SPEEDUPS]
    for log in [p.resolve() for p in args.logs] or default_logs():
        best: dict[str, float] = {}
        rounds = random.Random(0)
        _build_in_child(log, ALL, args.builder)  # a warm-up: the file cache, not timed
        for _ in range(args.repeat):
            order = list(variants)
            rounds.shuffle(order)  # no variant always first (a cold cache, a drifting clock)
            for variant in order:
                seconds = _build_in_child(log, variant, args.builder)
                best[variant] = min(best.get(variant, seconds), seconds)
        size = log.stat().st_size / 1e6
        print(
            f"\n{_shown(log)} ({size:.1f} MB), {args.builder}, best of "
            f"{args.repeat}: all speed-ups {best[ALL]:.2f} s, none {best[NONE]:.2f} s"
        )
        print(f"  {'left out':<22} {'build s':>8} {'saves s':>8} {'saves %':>8}")
        for name in SPEEDUPS:
            saves = best[name] - best[ALL]
            print(f"  {name:<22} {best[name]:>8.2f} {saves:>8.2f} {100 * saves / best[ALL]:>7.1f}%")
    return 0


def _build_in_child(log: Path, variant: str, builder: str) -> float:
    """One build's seconds, in a process of its own (nothing of an earlier build warm)."""
    out = subprocess.run(
        [sys.executable, __file__, "--builder", builder, "--one", str(log), variant],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    return float(out.stdout.strip().splitlines()[-1])


def _shown(log: Path) -> str:
    return log.relative_to(ROOT).as_posix() if log.is_relative_to(ROOT) else str(log)


if __name__ == "__main__":
    sys.exit(main())
