"""Trace-model speed and memory, beside tlparse on the same logs in the same run.

    python benchmarks/bench_model.py [LOG ...]

Without arguments: a 30+ MB log made with torch by ``make_big_log.py`` (kept in
``benchmarks/.cache/``, made once) and every log bundled in ``tests/data/shared``.
For each log it prints: MB/s from file to complete model (best of a few runs),
the tracemalloc peak of one parse against the log's size, a bare CPython scan
(split records, check md5s, decode every envelope: the floor to aim at), the
cached reload, and tlparse 0.4.3's whole run on the same log.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sphinx_torchtrace.trace import load_trace  # noqa: E402

CACHE = ROOT / "benchmarks" / ".cache"
BIG_LOG = CACHE / "big.log"


def best_of(runs: int, fn) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def bare_scan(path: Path) -> int:
    """The floor: split records, md5 every payload, json-decode every envelope."""
    n = 0
    with open(path, "rb") as f:
        head = None
        payload: list[bytes] = []

        def flush() -> None:
            nonlocal n
            if not head:
                return
            i = head.find(b"] {")
            env = json.loads(head[i + 2 :])
            if "has_payload" in env:
                hashlib.md5(b"\n".join(p[1:] for p in payload)).hexdigest()
            n += 1

        for line in f:
            line = line.rstrip(b"\n")
            if not line:
                continue
            if line.startswith(b"\t"):
                payload.append(line)
            else:
                flush()
                head, payload = line, []
        flush()
    return n


def tlparse_seconds(path: Path, runs: int) -> float | None:
    exe = shutil.which("tlparse")
    if exe is None:
        return None
    with tempfile.TemporaryDirectory() as out:
        cmd = [exe, str(path), "-o", out + "/o", "--overwrite", "--no-browser"]
        return best_of(runs, lambda: subprocess.run(cmd, capture_output=True, check=False))


def peak_memory(path: Path) -> int:
    tracemalloc.start()
    trace = load_trace(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del trace
    return peak


def ensure_big_log() -> Path | None:
    if BIG_LOG.exists() and BIG_LOG.stat().st_size >= 30e6:
        return BIG_LOG
    maker = ROOT / "benchmarks" / "make_big_log.py"
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch is not installed: skipping the 30+ MB log (nox -s bench installs it)")
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, str(maker), str(CACHE)], check=True)
    return BIG_LOG


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    logs: list[Path] = list(args.logs)
    if not logs:
        big = ensure_big_log()
        logs = [big] if big else []
        logs += sorted((ROOT / "tests" / "data" / "shared").glob("*/*.log"))
        logs += sorted((ROOT / "tests" / "data" / "shared").glob("*/*/*.log"))
    header = (
        f"{'log':44} {'MB':>7} {'model MB/s':>10} {'peak/size':>9} {'bare MB/s':>9} "
        f"{'cached s':>8} {'tlparse s':>9} {'tlparse/model':>13}"
    )
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory() as cache_dir:
        for log in logs:
            size = log.stat().st_size
            mb = size / 1e6
            model_s = best_of(args.runs, lambda log=log: load_trace(log))
            bare_s = best_of(args.runs, lambda log=log: bare_scan(log))
            peak = peak_memory(log)
            try:
                load_trace(log, cache_dir=cache_dir)
                cached_s: float | None = best_of(
                    args.runs,
                    lambda log=log: load_trace(log, cache_dir=cache_dir),
                )
            except TypeError:
                cached_s = None
            tl = tlparse_seconds(log, args.runs)
            name = str(log.relative_to(ROOT)) if log.is_relative_to(ROOT) else str(log)
            print(
                f"{name[-44:]:44} {mb:7.2f} {mb / model_s:10.1f} {peak / size:9.2f} "
                f"{mb / bare_s:9.1f} {cached_s if cached_s is not None else float('nan'):8.3f} "
                f"{tl if tl is not None else float('nan'):9.3f} "
                f"{(tl / model_s) if tl else float('nan'):13.2f}"
            )


if __name__ == "__main__":
    main()
