"""``redact``'s speed and memory on a big log, beside tlparse reading the same log.

    python benchmarks/bench_redact.py [--mb N] [LOG]
    python benchmarks/bench_redact.py --ranks 1024

Without LOG: ``benchmarks/.cache/big.log`` (``make_big_log.py``, made with torch) when it
is there, else a log of about N MB (default 1024) made by repeating the records of the
bundled training log with a user's paths in them (every record keeps its md5: records
stand alone).  Each tool runs as a child process, timed on the wall clock, its peak
resident memory read from the kernel (the child's ``ru_maxrss``).  Prints one line per
tool and the ratio; the issue asks for bounded memory (< 300 MB) and a time comparable
to reading the log.

With ``--ranks N``: a folder of N rank logs (``bench_ranks.rank_copies``, kind ``alike``,
from the real gloo rank logs, a user's home folder in their paths), redacted in parallel
beside ``tlparse --all-ranks-html`` reading the folder.  The peak is that of the largest
process (the command or one of its workers), with the number of workers it ran.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIG_LOG = ROOT / "benchmarks" / ".cache" / "big.log"
SEED = ROOT / "tests" / "data" / "shared" / "training" / "dedicated_log_torch_trace_ukjvghtw.log"


def repeated_log(dest: Path, megabytes: int) -> Path:
    """A log of about ``megabytes`` MB: the seed's records again and again, its user's home
    folder renamed so there is something to redact on every line that names a path."""
    seed = SEED.read_bytes().replace(b"/home/user/", b"/home/alice/")
    with open(dest, "wb") as f:
        while f.tell() < megabytes << 20:
            f.write(seed)
    return dest


def rank_folder(dest: Path, ranks: int) -> Path:
    """``dest`` with ``ranks`` alike rank logs whose paths name a user's home folder."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_ranks import rank_copies

    rank_copies(dest, ranks, kind="alike")
    for log in dest.iterdir():
        log.write_bytes(log.read_bytes().replace(b"/home/user/", b"/home/alice/"))
    return dest


def measure(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of a child process (``wait4``: its own, not the
    largest of every child so far)."""
    start = time.perf_counter()
    child = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise SystemExit(f"{command[0]} failed with status {child.returncode}")
    return seconds, usage.ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="?", type=Path)
    parser.add_argument("--mb", type=int, default=1024, help="size of the made log (MB)")
    parser.add_argument("--ranks", type=int, help="a folder of this many rank logs instead")
    args = parser.parse_args()
    tlparse = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    with tempfile.TemporaryDirectory(prefix="bench-redact-") as tmp:
        if args.ranks:
            log = rank_folder(Path(tmp) / "ranks", args.ranks)
            size = sum(p.stat().st_size for p in log.iterdir()) / (1 << 20)
            print(f"{args.ranks} rank logs: {size:.0f} MB, {os.cpu_count()} CPUs")
            read = [tlparse, str(log), "--all-ranks-html"]
        else:
            log = args.log or (
                BIG_LOG if BIG_LOG.exists() else repeated_log(Path(tmp) / "big.log", args.mb)
            )
            size = log.stat().st_size / (1 << 20)
            print(f"{log.name}: {size:.0f} MB")
            read = [tlparse, str(log)]
        out = Path(tmp) / "out"
        rows = [
            (
                "tlparse 0.4.3 (read)",
                [*read, "-o", str(out), "--no-browser", "--overwrite"],
            ),
            (
                "sphinx-torchtrace redact",
                [
                    sys.executable,
                    "-m",
                    "sphinx_torchtrace",
                    "redact",
                    str(log),
                    "-o",
                    str(Path(tmp) / ("redacted" if args.ranks else "redacted.log")),
                ],
            ),
        ]
        results = []
        for name, command in rows:
            seconds, peak = measure(command)
            results.append(seconds)
            print(
                f"{name:<26} {seconds:7.1f} s  {size / seconds:6.1f} MB/s  peak RSS {peak:6.0f} MB"
            )
        print(f"redact / tlparse: {results[1] / results[0]:.2f}x the time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
