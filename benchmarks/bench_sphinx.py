"""A full ``sphinx-build -b html`` (furo) of a page holding a 30+ MB trace, beside tlparse.

    python benchmarks/bench_sphinx.py [LOG]

Builds, in temporary folders and in this one run: the site with the
``torchtrace`` directive (cold, then a rebuild with nothing changed), the same
site without the directive (cold and rebuild), and ``tlparse`` on the same
log.  Cold builds and tlparse runs alternate (``--repeat`` rounds) and the best
of each is compared, so a busy or throttled machine slows both alike.  Prints
wall times and the ratios the project's targets are about: cold build against
tlparse (target: within 10x), and the no-change rebuild against the site
without the directive (target: under 2 s more).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_model import BIG_LOG, ensure_big_log  # noqa: E402

CONF = 'extensions = ["sphinx_torchtrace"]\nhtml_theme = "furo"\nproject = "bench"\n'
PAGE = "Compilation report\n==================\n\nSome prose before the report.\n\n"


def build(srcdir: Path, outdir: Path, jobs: int) -> float:
    cmd = [sys.executable, "-m", "sphinx", "-q", "-b", "html", "-j", str(jobs)]
    start = time.perf_counter()
    subprocess.run([*cmd, str(srcdir), str(outdir)], check=True, capture_output=True)
    return time.perf_counter() - start


def make_site(base: Path, log: Path | None) -> Path:
    src = base / "src"
    src.mkdir(parents=True)
    (src / "conf.py").write_text(CONF)
    text = PAGE
    if log is not None:
        shutil.copy(log, src / "trace.log")
        text += ".. torchtrace:: trace.log\n   :name: bench\n"
    (src / "index.rst").write_text(text)
    return src


def run_tlparse(log: Path, out: Path) -> float:
    tlparse = shutil.which("tlparse")
    if not tlparse:
        return float("nan")
    cmd = [tlparse, str(log), "-o", str(out), "--overwrite", "--no-browser"]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="?", type=Path)
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument(
        "-r",
        "--repeat",
        type=int,
        default=3,
        help="rounds of (cold build, tlparse), interleaved; the best of each is compared",
    )
    args = parser.parse_args()
    log = args.log or ensure_big_log() or BIG_LOG
    if not log.exists():
        raise SystemExit(f"no log to build: {log} (torch is needed to make it)")
    size = log.stat().st_size / 1e6
    colds: list[float] = []
    tls: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        with_trace = make_site(base / "with", log)
        without = make_site(base / "without", None)
        for _ in range(max(1, args.repeat)):
            # A cold build: no output, no generated pages, no parsed-trace cache.
            shutil.rmtree(base / "with" / "out", ignore_errors=True)
            shutil.rmtree(with_trace / "torchtrace", ignore_errors=True)
            colds.append(build(with_trace, base / "with" / "out", args.jobs))
            tls.append(run_tlparse(log, base / "tl"))
        rebuild = build(with_trace, base / "with" / "out", args.jobs)
        plain_cold = build(without, base / "without" / "out", args.jobs)
        plain_rebuild = build(without, base / "without" / "out", args.jobs)
        pages = sum(1 for _ in (with_trace / "torchtrace").rglob("*.rst"))
    cold, tl = min(colds), min(tls)

    def runs(values: list[float]) -> str:
        return "" if len(values) < 2 else "  (runs: " + ", ".join(f"{v:.2f}" for v in values) + ")"

    print(f"log: {log.name}, {size:.1f} MB, {pages} generated pages, sphinx -j {args.jobs}")
    print(f"{'cold build with the trace':40} {cold:8.2f} s{runs(colds)}")
    print(f"{'no-change rebuild with the trace':40} {rebuild:8.2f} s")
    print(f"{'cold build without the directive':40} {plain_cold:8.2f} s")
    print(f"{'no-change rebuild without':40} {plain_rebuild:8.2f} s")
    print(f"{'tlparse 0.4.3, same log':40} {tl:8.2f} s{runs(tls)}")
    print(f"cold build / tlparse: {cold / tl:.1f}x (target <= 10x; best of {len(colds)} each)")
    print(f"rebuild overhead: {rebuild - plain_rebuild:+.2f} s (target < 2 s)")


if __name__ == "__main__":
    main()
