"""What the site of every corpus trace weighs, beside tlparse's report of the same log.

    python benchmarks/bench_corpus.py [TRACE ...] [--heights] [--json OUT]

For each trace of ``tests/data/corpus`` (or the paths given: a log, a ``.log.gz`` or a
folder of rank logs), in one run: a furo ``sphinx-build`` of a page holding only that
trace, and ``tlparse`` on the same log(s) (decompressed first: tlparse reads plain files;
``--all-ranks-html`` for a folder).  Prints, per trace: generated pages, HTML bytes of
the trace's pages, bytes of its downloads, and tlparse's HTML bytes and wall time beside
ours.  With ``--heights`` (Playwright and a Chromium), the tallest of the trace's pages
at 1400x900: every page is measured, so this takes a while on big traces.

Cold build and rebuild times of one trace against tlparse (best of N, interleaved) are
``bench_sphinx.py``'s job: ``python benchmarks/bench_sphinx.py LOG``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "corpus"
CONF = 'extensions = ["sphinx_torchtrace"]\nhtml_theme = "furo"\nproject = "corpus"\n'


@dataclass
class Weight:
    trace: str
    log_bytes: int  # uncompressed
    pages: int
    html_bytes: int
    download_bytes: int
    build_s: float
    tlparse_html_bytes: int
    tlparse_s: float
    tallest_px: int | None = None
    tallest_page: str | None = None


def corpus_traces() -> list[Path]:
    """A folder of rank logs is one trace; any other log is one."""
    found: list[Path] = []
    for folder in sorted(p for p in CORPUS.rglob("*") if p.is_dir()):
        logs = sorted(p for p in folder.iterdir() if p.name.startswith("dedicated_log_torch_trace"))
        if any("_rank_" in p.name for p in logs):
            found.append(folder)
        else:
            found += logs
    return found


def plain_copy(trace: Path, dest: Path) -> Path:
    """The trace with every log decompressed, for tlparse (and the same bytes for us)."""
    dest.mkdir(parents=True)
    logs = sorted(trace.iterdir()) if trace.is_dir() else [trace]
    for log in logs:
        name = log.name[: -len(".gz")] if log.name.endswith(".gz") else log.name
        data = gzip.decompress(log.read_bytes()) if log.name.endswith(".gz") else log.read_bytes()
        (dest / name).write_bytes(data)
    return dest if trace.is_dir() else dest / logs[0].name.removesuffix(".gz")


def build_site(trace: Path, base: Path) -> tuple[Path, Path, float]:
    src = base / "src"
    src.mkdir(parents=True)
    (src / "conf.py").write_text(CONF)
    copied = plain_copy(trace, src / "logs")
    rel = copied.relative_to(src).as_posix()
    (src / "index.rst").write_text(f"Corpus\n======\n\n.. torchtrace:: {rel}\n   :name: t\n")
    out = base / "out"
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(out)],
        check=True,
        capture_output=True,
        cwd=src,
    )
    return src, out, time.perf_counter() - start


def run_tlparse(log: Path, out: Path) -> tuple[int, float]:
    """(HTML bytes, wall seconds) of tlparse's report; (0, nan) without tlparse."""
    tlparse = shutil.which("tlparse")
    if not tlparse:
        return 0, float("nan")
    extra = ["--all-ranks-html"] if log.is_dir() else []
    start = time.perf_counter()
    subprocess.run(
        [tlparse, str(log), *extra, "-o", str(out), "--overwrite", "--no-browser"],
        check=True,
        capture_output=True,
    )
    seconds = time.perf_counter() - start
    return sum(p.stat().st_size for p in out.rglob("*.html")), seconds


def tallest(out: Path, pages: list[Path]) -> tuple[int, str] | None:
    """The tallest page at 1400x900 in Chromium, read from the files (no server needed)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    best = (0, "")
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        for html in pages:
            page.goto(html.as_uri())
            height = int(page.evaluate("document.documentElement.scrollHeight"))
            if height > best[0]:
                best = (height, html.relative_to(out).as_posix())
        browser.close()
    return best


def measure(trace: Path, heights: bool) -> Weight:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        src, out, seconds = build_site(trace, base / "site")
        plain = plain_copy(trace, base / "plain")
        log_bytes = sum(p.stat().st_size for p in (plain.iterdir() if plain.is_dir() else [plain]))
        tl_bytes, tl_seconds = run_tlparse(plain, base / "tl")
        mine = sorted((out / "torchtrace").rglob("*.html"))
        downloads = out / "_downloads"
        weight = Weight(
            trace=trace.relative_to(ROOT).as_posix() if trace.is_relative_to(ROOT) else str(trace),
            log_bytes=log_bytes,
            pages=sum(1 for p in (src / "torchtrace").rglob("*") if p.suffix in (".rst", ".md")),
            html_bytes=sum(p.stat().st_size for p in mine),
            download_bytes=sum(p.stat().st_size for p in downloads.rglob("*") if p.is_file()),
            build_s=seconds,
            tlparse_html_bytes=tl_bytes,
            tlparse_s=tl_seconds,
        )
        if heights:
            found = tallest(out, mine)
            if found is not None:
                weight.tallest_px, weight.tallest_page = found
        return weight


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("traces", nargs="*", type=Path)
    parser.add_argument("--heights", action="store_true", help="measure page heights")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    traces = [t.resolve() for t in args.traces] or corpus_traces()
    rows = []
    print(
        f"{'trace':58} {'log MB':>7} {'pages':>6} {'HTML MB':>8} {'tlparse':>8} "
        f"{'x':>5} {'dl MB':>6} {'build s':>8} {'tl s':>6} {'tallest px':>10}"
    )
    for trace in traces:
        w = measure(trace, args.heights)
        rows.append(w)
        ratio = w.html_bytes / w.tlparse_html_bytes if w.tlparse_html_bytes else float("nan")
        print(
            f"{w.trace[-58:]:58} {w.log_bytes / 1e6:7.1f} {w.pages:6d} {w.html_bytes / 1e6:8.2f} "
            f"{w.tlparse_html_bytes / 1e6:8.2f} {ratio:5.2f} {w.download_bytes / 1e6:6.2f} "
            f"{w.build_s:8.1f} {w.tlparse_s:6.2f} {w.tallest_px or '':>10}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")


if __name__ == "__main__":
    main()
