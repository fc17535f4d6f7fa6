"""How tall each frame page is at 1400x900, in screens, for the logs given.

    python benchmarks/bench_page_height.py [LOG ...] [--min-size BYTES] [--screens 6]

For each trace log (``.log.gz`` decompressed first; by default every log of
``tests/data/corpus`` of at least ``--min-size`` bytes, 1 MB), the standalone report is
built as users build it (``sphinx-torchtrace build LOG -o DIR --no-browser``) and every
frame page is opened in headless Chromium (the system's ``chromium``, else Playwright's)
at a 1400x900 window; its height is ``document.documentElement.scrollHeight``, folds
closed, as a reader first sees it.  Prints the tallest pages of each log and every page
taller than ``--screens`` screens (issue 40's target for a recompiled frame: 6), and exits
1 when there is one.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any  # a Playwright browser, imported only when run

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "corpus"
WIDTH, HEIGHT = 1400, 900


def logs_of(paths: list[Path], min_size: int) -> list[Path]:
    """The logs given, or the corpus's of at least ``min_size`` bytes uncompressed."""
    if paths:
        return paths
    found = []
    for path in sorted(CORPUS.rglob("*torch_trace*.log*")):
        opened = gzip.open(path) if path.suffix == ".gz" else path.open("rb")
        with opened as stream:
            size = sum(len(chunk) for chunk in iter(lambda s=stream: s.read(1 << 20), b""))
        if size >= min_size:
            found.append(path)
    return found


def build(log: Path, work: Path) -> Path:
    """The standalone report of ``log`` in ``work/site``."""
    plain = work / log.name.removesuffix(".gz")
    if log.suffix == ".gz":
        with gzip.open(log) as src, plain.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    else:
        shutil.copy(log, plain)
    site = work / "site"
    cli = [sys.executable, "-m", "sphinx_torchtrace", "build", str(plain)]
    subprocess.run([*cli, "-o", str(site), "--no-browser"], check=True, capture_output=True)
    return site


def heights(site: Path, browser: Any) -> list[tuple[int, str]]:
    """Each frame page's height in pixels, tallest first."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    found = []
    for path in sorted(site.glob("torchtrace/*/frame-*.html")):
        page.goto(path.resolve().as_uri())
        tall = page.evaluate("document.documentElement.scrollHeight")
        found.append((int(tall), str(path.relative_to(site))))
    page.close()
    return sorted(found, reverse=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("logs", nargs="*", type=Path)
    parser.add_argument("--min-size", type=int, default=1_000_000)
    parser.add_argument("--screens", type=float, default=6.0)
    parser.add_argument("--top", type=int, default=3, help="tallest pages shown per log")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    over = []
    with sync_playwright() as pw:
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        browser = pw.chromium.launch(
            executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
        )
        print(f"| log | frame pages | tallest (screens of {HEIGHT} px) | page |")
        print("|---|---|---|---|")
        for log in logs_of(args.logs, args.min_size):
            log = log.resolve()
            name = str(log.relative_to(ROOT)) if log.is_relative_to(ROOT) else log.name
            with tempfile.TemporaryDirectory() as tmp:
                found = heights(build(log, Path(tmp)), browser)
            for tall, page in found[: args.top]:
                print(f"| {name} | {len(found)} | {tall / HEIGHT:.1f} | {page} |")
            over += [(name, page, tall) for tall, page in found if tall > args.screens * HEIGHT]
        browser.close()
    for name, page, tall in over:
        print(f"over {args.screens:g} screens: {name} {page} ({tall / HEIGHT:.1f})")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
