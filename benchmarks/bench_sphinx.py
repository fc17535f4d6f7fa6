"""A full ``sphinx-build -b html`` (furo) of a page holding a 30+ MB trace, beside tlparse.

    python benchmarks/bench_sphinx.py [LOG] [--baseline REF] [--repeat 5] [-j 1]

LOG is any trace log, ``.log.gz`` included (decompressed first, for both tools).

Builds, in temporary folders and in this one run: the site with the
``torchtrace`` directive (cold, then a rebuild with nothing changed), the same
site without the directive (cold and rebuild), and ``tlparse`` on the same
log.  Cold builds and tlparse runs alternate (``--repeat`` rounds) and the best
of each is compared, so a busy or throttled machine slows both alike.  With
``--baseline REF`` (a commit, e.g. ``HEAD~1``), the extension's code at REF
(checked out in a git worktree) builds the same site in the same rounds, so
before/after figures come from one window.  Prints wall times, the ratio to
tlparse (issue 40's target: within 3x), the rebuild overhead (target: at most +1 s), and
what the site weighs: pages, doctree nodes and HTML bytes.
"""

from __future__ import annotations

import argparse
import gzip
import os
import pickle
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


def build(srcdir: Path, outdir: Path, jobs: int, code: Path | None = None) -> float:
    """Wall seconds of one ``sphinx-build``; ``code`` puts another checkout's package first."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH")]))
    cmd = [sys.executable, "-m", "sphinx", "-q", "-b", "html", "-j", str(jobs)]
    start = time.perf_counter()
    # from the site's folder: run from the repository, ``python -m`` would put this
    # checkout's package first on sys.path, ahead of a baseline's PYTHONPATH
    subprocess.run(
        [*cmd, str(srcdir), str(outdir)], check=True, capture_output=True, env=env, cwd=srcdir
    )
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


def weight(src: Path, out: Path) -> tuple[int, int, int]:
    """(generated pages, doctree nodes of all documents, bytes of HTML) of a built site."""
    pages = sum(1 for p in (src / "torchtrace").rglob("*") if p.suffix in (".rst", ".md"))
    nodes = 0
    for path in (out / ".doctrees").rglob("*.doctree"):
        with path.open("rb") as f:
            nodes += sum(1 for _ in pickle.load(f).findall())
    html = sum(p.stat().st_size for p in out.rglob("*.html"))
    return pages, nodes, html


def worktree(ref: str, where: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), ref],
        check=True,
        capture_output=True,
    )
    return where


class Variant:
    """One version of the extension building the site: its times and what it made."""

    def __init__(self, name: str, base: Path, log: Path, code: Path | None) -> None:
        self.name, self.code = name, code
        self.src = make_site(base, log)
        self.out = base / "out"
        self.colds: list[float] = []
        self.rebuild = float("nan")

    def cold(self, jobs: int) -> None:
        # A cold build: no output, no generated pages, no parsed-trace cache.
        shutil.rmtree(self.out, ignore_errors=True)
        shutil.rmtree(self.src / "torchtrace", ignore_errors=True)
        self.colds.append(build(self.src, self.out, jobs, self.code))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("log", nargs="?", type=Path)
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument(
        "-r",
        "--repeat",
        type=int,
        default=5,
        help="rounds of (cold build, tlparse), interleaved; the best of each is compared",
    )
    parser.add_argument("--baseline", help="a git ref whose extension code builds alongside")
    args = parser.parse_args()
    log = args.log or ensure_big_log() or BIG_LOG
    if not log.exists():
        raise SystemExit(f"no log to build: {log} (torch is needed to make it)")
    tls: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        if log.name.endswith(".gz"):  # tlparse reads plain files: both read the same bytes
            plain = base / log.name[: -len(".gz")]
            plain.write_bytes(gzip.decompress(log.read_bytes()))
            log = plain
        size = log.stat().st_size / 1e6
        variants = [Variant("this code", base / "with", log, None)]
        if args.baseline:
            code = worktree(args.baseline, base / "baseline-code")
            variants.append(Variant(f"baseline {args.baseline}", base / "base", log, code))
        without = make_site(base / "without", None)
        try:
            for _ in range(max(1, args.repeat)):
                for variant in variants:
                    variant.cold(args.jobs)
                tls.append(run_tlparse(log, base / "tl"))
            for variant in variants:
                variant.rebuild = build(variant.src, variant.out, args.jobs, variant.code)
            plain_cold = build(without, base / "without" / "out", args.jobs)
            plain_rebuild = build(without, base / "without" / "out", args.jobs)
            weights = [weight(v.src, v.out) for v in variants]
        finally:
            if args.baseline:
                subprocess.run(
                    [
                        "git",
                        "-C",
                        str(ROOT),
                        "worktree",
                        "remove",
                        "--force",
                        str(base / "baseline-code"),
                    ],
                    capture_output=True,
                )
    tl = min(tls)

    def runs(values: list[float]) -> str:
        return "" if len(values) < 2 else "  (runs: " + ", ".join(f"{v:.2f}" for v in values) + ")"

    print(f"log: {log.name}, {size:.1f} MB, sphinx -j {args.jobs}, best of {len(tls)} rounds")
    print(f"{'tlparse 0.4.3, same log':44} {tl:8.2f} s{runs(tls)}")
    print(f"{'cold build without the directive':44} {plain_cold:8.2f} s")
    print(f"{'no-change rebuild without':44} {plain_rebuild:8.2f} s")
    for variant, (pages, nodes, html) in zip(variants, weights, strict=True):
        cold = min(variant.colds)
        print(f"-- {variant.name}")
        print(f"{'   cold build with the trace':44} {cold:8.2f} s{runs(variant.colds)}")
        print(f"{'   no-change rebuild with the trace':44} {variant.rebuild:8.2f} s")
        print(f"   cold build / tlparse: {cold / tl:.1f}x (target <= 3x)")
        print(f"   rebuild overhead: {variant.rebuild - plain_rebuild:+.2f} s (target <= +1 s)")
        print(f"   {pages} generated pages, {nodes} doctree nodes, {html / 1e6:.1f} MB of HTML")


if __name__ == "__main__":
    main()
