"""How fast each page of a report loads in headless Chromium, against a near-empty page of
the same site.

    python benchmarks/bench_page_load.py [LOG ...] [--rounds 3] [--min-size BYTES]

For each trace log (``.log.gz`` decompressed first; by default every log of
``tests/data/corpus`` of at least ``--min-size`` bytes), the standalone report is built as
users build it (``sphinx-torchtrace build LOG -o DIR --no-browser``) and every page of it
is opened in headless Chromium (the system's ``chromium``, else Playwright's) from disk, in
``--rounds`` interleaved rounds.  A page's figure is its best ``loadEventEnd`` of the
navigation timing (parsing, styles, scripts and layout done), and its DOM size the number
of elements.  The near-empty page is the site's own ``genindex.html``: the same theme and
Sphinx's scripts, no content of the extension.

Prints a table per log (the near-empty page, the median frame page, the slowest page, its
elements) and every page over 3x; exits 1 when the median frame page is over 1.3x or a
page over 3x (issue 56's targets).  Load times are wall times: say how loaded the machine
was (the load average is printed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_page_height import build, logs_of  # noqa: E402 - a sibling benchmark's helpers

TYPICAL, WORST = 1.3, 3.0
_TIMING = """() => {
  const n = performance.getEntriesByType("navigation")[0];
  return [n.loadEventEnd, document.getElementsByTagName("*").length];
}"""


def measure(site: Path, browser: Any, rounds: int) -> dict[str, tuple[float, int]]:
    """Each page's best load time (ms) and element count, pages in the same order each
    round, every round after a first unmeasured visit of each page (a warm disk cache)."""
    pages = sorted(p for p in site.rglob("*.html") if "_static" not in p.parts)
    tab = browser.new_page(viewport={"width": 1400, "height": 900})
    best: dict[str, tuple[float, int]] = {}
    for round_ in range(rounds + 1):
        for path in pages:
            tab.goto(path.resolve().as_uri(), wait_until="load")
            loaded, elements = tab.evaluate(_TIMING)
            if round_ == 0:
                continue
            name = str(path.relative_to(site))
            if name not in best or loaded < best[name][0]:
                best[name] = (float(loaded), int(elements))
    tab.close()
    return best


def report(name: str, found: dict[str, tuple[float, int]]) -> list[str]:
    """One table row for a log, and the pages over the worst ratio."""
    empty = found["genindex.html"][0]
    frames = [ms for page, (ms, _n) in found.items() if "/frame-" in f"/{page}"]
    median = statistics.median(frames) if frames else float("nan")
    slowest, (slow_ms, slow_n) = max(found.items(), key=lambda item: item[1][0])
    print(
        f"| {name} | {len(found)} | {empty:.0f} | {median:.0f} ({median / empty:.2f}x) "
        f"| {slowest} {slow_ms:.0f} ({slow_ms / empty:.2f}x) | {slow_n} |"
    )
    over = [f"{name} {page} {ms / empty:.2f}x" for page, (ms, _n) in found.items()]
    return [
        line for line, (ms, _n) in zip(over, found.values(), strict=True) if ms > WORST * empty
    ] + ([f"{name}: median frame page {median / empty:.2f}x"] if median > TYPICAL * empty else [])


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("logs", nargs="*", type=Path)
    parser.add_argument("--min-size", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import shutil

    from playwright.sync_api import sync_playwright

    root = Path(__file__).resolve().parent.parent
    failed: list[str] = []
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("| log | pages | near-empty page ms | median frame page ms | slowest page | elements |")
    print("|---|---|---|---|---|---|")
    with sync_playwright() as pw:
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for log in logs_of(args.logs, args.min_size):
            log = log.resolve()
            name = str(log.relative_to(root)) if log.is_relative_to(root) else log.name
            with tempfile.TemporaryDirectory() as tmp:
                found = measure(build(log, Path(tmp)), browser, args.rounds)
            failed += report(name, found)
        browser.close()
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    for line in failed:
        print(f"over target: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
