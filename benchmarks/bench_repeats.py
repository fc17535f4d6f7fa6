"""Blocks of code or text that a built site shows more than once, and what they weigh.

    python benchmarks/bench_repeats.py SITE [SITE ...] [--min-chars 300] [--top 10]

Each SITE is an HTML output folder (``sphinx-torchtrace build LOG -o SITE``, or a
``sphinx-build -b html`` output).  Every ``<pre>`` block of every page whose text (tags
removed, entities decoded, stripped) is at least ``--min-chars`` long is keyed by that
text; a block whose text an earlier block (in page order) already showed is a repeat, and
its HTML bytes are what showing it once would save.  Printed per site: its HTML bytes and
the repeats' bytes; then, over all sites, the repeats by where the first copy and the
repeat are (the fold title or heading above each, numbers dropped) and whether they are
on the same page.  Issue 40's point 2 asks for no per-page repeats of the same large
blocks: this is how the ones left were found.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import re
from collections import Counter
from pathlib import Path

PRE = re.compile(r"<pre[^>]*>(.*?)</pre>", re.S)
TAG = re.compile(r"<[^>]+>")
SUMMARY = re.compile(r"<summary[^>]*>(.*?)</summary>", re.S)
HEADING = re.compile(r"<h\d[^>]*>(.*?)</h\d>", re.S)


def place(page: str, at: int) -> str:
    """The fold title (or else the heading) above offset ``at``, numbers and sizes dropped."""
    summary, closed = page.rfind("<summary", 0, at), page.rfind("</details>", 0, at)
    if summary > closed:
        m = SUMMARY.match(page, summary)
        text = TAG.sub("", m.group(1)) if m else "?"
    else:
        heading = max(page.rfind(f"<h{n}", 0, at) for n in (1, 2, 3))
        m = HEADING.match(page, heading) if heading >= 0 else None
        text = "section " + TAG.sub("", m.group(1)).rstrip("¶") if m else "?"
    return re.sub(r"\s*[#(\d].*", "", text).strip() or text.strip()[:40]


def repeats(site: Path, min_chars: int, kinds: Counter[tuple[str, str, str]]) -> tuple[int, int]:
    """(HTML bytes, bytes of repeated blocks) of one site; ``kinds`` gains the repeats."""
    first: dict[bytes, tuple[str, str]] = {}
    total = repeated = 0
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8", errors="replace")
        total += len(text.encode())
        for m in PRE.finditer(text):
            body = html.unescape(TAG.sub("", m.group(1))).strip()
            if len(body) < min_chars:
                continue
            key = hashlib.blake2b(body.encode(), digest_size=16).digest()
            here = (str(page.relative_to(site)), place(text, m.start()))
            seen = first.setdefault(key, here)
            if seen is here:
                continue
            size = len(m.group(0).encode())
            repeated += size
            where = "same page" if seen[0] == here[0] else "another page"
            kinds[(seen[1], here[1], where)] += size
    return total, repeated


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("sites", nargs="+", type=Path)
    parser.add_argument("--min-chars", type=int, default=300)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    kinds: Counter[tuple[str, str, str]] = Counter()
    print("| site | HTML MB | repeated MB | % |")
    print("|---|---|---|---|")
    all_total = all_repeated = 0
    for site in args.sites:
        total, repeated = repeats(site, args.min_chars, kinds)
        all_total += total
        all_repeated += repeated
        share = 100 * repeated / max(total, 1)
        print(f"| {site.name} | {total / 1e6:.2f} | {repeated / 1e6:.2f} | {share:.1f} |")
    share = 100 * all_repeated / max(all_total, 1)
    print(f"| **all** | {all_total / 1e6:.2f} | {all_repeated / 1e6:.2f} | {share:.1f} |")
    print("\n| first shown under | repeated under | where | MB |\n|---|---|---|---|")
    for (seen, again, where), size in kinds.most_common(args.top):
        print(f"| {seen} | {again} | {where} | {size / 1e6:.2f} |")


if __name__ == "__main__":
    main()
