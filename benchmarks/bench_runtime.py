"""The cost of ``run --runtime``: a program's wall time with torch's profiler and without.

    python benchmarks/bench_runtime.py [--rounds 3] [--steps 300]

The program is a small training loop (a compiled MLP, the optimizer step in eager code, so
torch's optimizer-step hooks count the steps) run by ``sphinx-torchtrace run`` three ways:
plain, ``--runtime`` (the whole run profiled) and ``--runtime --steps A:B`` (a window of
ten steps in the middle).  Each round runs the three in a shuffled order; the figure of
each is the best of the rounds (the least disturbed), read from what ``run`` prints ("the
program exited ... after N s"), so the report's build is not counted.  Needs torch.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = textwrap.dedent(
    """
    import sys
    import torch

    model = torch.compile(
        torch.nn.Sequential(
            torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256)
        )
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 256)
    for _ in range(int(sys.argv[1])):
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad()
    """
)
_EXITED = re.compile(r"exited with status \d+ after ([\d.]+) s")


def timed(args: list[str], work: Path, steps: int) -> float:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx_torchtrace",
            "run",
            "--no-browser",
            *args,
            "-o",
            str(work / "out"),
            "--",
            sys.executable,
            "program.py",
            str(steps),
        ],
        cwd=work,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "CI": "true",
            "XDG_CACHE_HOME": str(work / "cache"),
        },
        check=False,
    )
    found = _EXITED.search(result.stderr)
    if result.returncode != 0 or found is None:
        raise SystemExit(f"run {args} failed:\n{result.stderr[-2000:]}")
    return float(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=300, help="training steps of the program")
    args = parser.parse_args()
    middle = args.steps // 2
    variants = {
        "plain run": [],
        "--runtime (whole run)": ["--runtime"],
        f"--runtime --steps {middle}:{middle + 10}": [
            "--runtime",
            "--steps",
            f"{middle}:{middle + 10}",
        ],
    }
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-runtime-") as tmp:
        work = Path(tmp)
        (work / "program.py").write_text(PROGRAM)
        for _ in range(args.rounds):
            order = list(variants)
            random.shuffle(order)
            for name in order:
                seconds = timed(variants[name], work, args.steps)
                best[name] = min(best.get(name, seconds), seconds)
    base = best["plain run"]
    print(f"{args.steps} training steps, best of {args.rounds} rounds, {os.cpu_count()} CPUs")
    for name in variants:
        extra = best[name] - base
        print(f"{name:<32} {best[name]:7.2f} s  {extra:+6.2f} s  ({best[name] / base:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
