"""Where the HTML weight of our report goes, page part by page part, beside tlparse's.

    python benchmarks/bench_weight.py [LOG ...] [--min-size BYTES] [--json OUT]

For each trace log of ``tests/data`` (every ``*torch_trace*.log`` / ``.log.gz``, and the
``.log`` files of ``tests/data/captured/*/`` and ``tests/data/corpus/**``; or the logs
given), one at a time: our standalone report, built as users build it
(``sphinx-torchtrace build LOG -o DIR --no-browser``: furo when installed, a fresh cache
folder each time, so nothing is reused), and ``tlparse LOG -o DIR2 --overwrite
--no-browser`` on the same log (decompressed first: tlparse reads plain files).
``--min-size`` keeps the logs of at least that many bytes, uncompressed (the targets of
issue 40 are for logs of 1 MB or more: ``--min-size 1000000``; MB here are 10^6 bytes).

Only ``.html`` files are counted on both sides (CSS, JS, downloads, the search index and
tlparse's raw artifacts are not HTML weight); the bytes of all files are given for
reference.  Each of our pages is cut into parts, every byte in exactly one (the outermost
classified element wins, and the parts sum to the page's size: checked on every page):

- ``head``: the ``<head>`` element, and the ``<script>``/``<link>``/``<style>`` elements
  of the body outside the page's content (furo puts its JS links at the end of the body);
- ``navigation``: the theme's chrome around the content, repeated on every page: furo's
  mobile header, sidebar (brand, search, global toctree), local toc drawer, footer
  (prev/next links), back-to-top and content icons, its icon sprite sheet (an ``<svg>``
  outside the content), its overlays and toggles; alabaster/basic's sidebar, related
  bars and footer;
- inside the content (furo's ``<article>``, the basic themes' ``div.body``):
  ``folds`` (``<details>``), ``code`` (``<pre>``, ``div.highlight*`` not in a fold),
  ``tables`` (``<table>`` and its ``div.table-wrapper``), ``svg`` (inline ``<svg>``:
  charts);
- ``other``: the rest: the content's text, headings, lists, toctrees, and the few bytes
  of wrapper tags and whitespace between the theme's parts.

The figures say what a smaller page could drop: ``navigation`` and ``head`` repeat on
every page (their bytes per page are printed), the content parts grow with the log.
Pages are parsed with Python's ``html.parser``, whose source offsets the byte counts need.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
PARTS = ("head", "navigation", "folds", "code", "tables", "svg", "other")
TRACE_LOG = re.compile(r"torch_trace.*\.log(\.gz)?$")
PREFIX = "dedicated_log_torch_trace_"

#: Elements of HTML that have no end tag.
VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
#: Class names of the themes' chrome: furo's, then alabaster's / basic's.
NAV_CLASSES = frozenset(
    {
        "mobile-header",
        "sidebar-drawer",
        "toc-drawer",
        "related-pages",
        "bottom-of-page",
        "back-to-top",
        "content-icon-container",
        "skip-to-content",
        "overlay",
        "sidebar-toggle",
        "toc-overlay-icon",
        "theme-toggle-container",
        "sphinxsidebar",
        "sphinxsidebarwrapper",
        "related",
        "footer",
        "clearer",
    }
)
#: Tags that are chrome wherever they stand outside the content.
NAV_TAGS = frozenset({"header", "footer", "aside", "nav", "svg", "label", "input", "form"})
HEAD_TAGS = frozenset({"script", "link", "style", "noscript"})


# -- the parts of a page --------------------------------------------------------------------


class _Splitter(HTMLParser):
    """Spans (start, end, part) of a page's classified elements, in character offsets;
    an element inside a classified one is not looked at (the outermost wins)."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=False)
        self.text = text
        self.lines = [0]  # html.parser counts lines by "\n" alone
        for line in text.split("\n")[:-1]:
            self.lines.append(self.lines[-1] + len(line) + 1)
        # open elements: (tag, start offset, part or None, inside the content)
        self.stack: list[tuple[str, int, str | None, bool]] = []
        self.spans: list[tuple[int, int, str]] = []

    def _offset(self) -> int:
        line, column = self.getpos()
        return self.lines[line - 1] + column

    def _claimed(self) -> bool:
        return any(part for _, _, part, _ in self.stack)

    def _content(self) -> bool:
        return bool(self.stack) and self.stack[-1][3]

    def _part(self, tag: str, attrs: dict[str, str | None], content: bool) -> str | None:
        classes = set((attrs.get("class") or "").split())
        if tag == "head":
            return "head"
        if not content:
            if tag in HEAD_TAGS:
                return "head"
            if tag in NAV_TAGS or classes & NAV_CLASSES:
                return "navigation"
            return None
        if tag == "details":
            return "folds"
        if tag == "pre" or (
            tag == "div" and any(c == "highlight" or c.startswith("highlight-") for c in classes)
        ):
            return "code"
        if tag == "table" or "table-wrapper" in classes:
            return "tables"
        if tag == "svg":
            return "svg"
        return None

    @staticmethod
    def _starts_content(tag: str, attrs: dict[str, str | None]) -> bool:
        classes = set((attrs.get("class") or "").split())
        return tag == "article" or attrs.get("role") == "main" or "body" in classes

    def handle_starttag(self, tag: str, attr_list: list[tuple[str, str | None]]) -> None:
        start = self._offset()
        attrs = dict(attr_list)
        content = self._content() or self._starts_content(tag, attrs)
        part = None if self._claimed() else self._part(tag, attrs, content)
        if tag in VOID:
            if part:
                self.spans.append((start, start + len(self.get_starttag_text() or ""), part))
            return
        self.stack.append((tag, start, part, content))

    def handle_startendtag(self, tag: str, attr_list: list[tuple[str, str | None]]) -> None:
        start = self._offset()
        attrs = dict(attr_list)
        content = self._content() or self._starts_content(tag, attrs)
        part = None if self._claimed() else self._part(tag, attrs, content)
        if part:
            self.spans.append((start, start + len(self.get_starttag_text() or ""), part))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                start = self._offset()
                end = self.text.index(">", start) + 1
                # the element and any left open inside it end here
                for _, begin, part, _ in self.stack[i:]:
                    if part:
                        self.spans.append((begin, end, part))
                del self.stack[i:]
                return

    def finish(self) -> list[tuple[int, int, str]]:
        self.close()
        for _, begin, part, _ in self.stack:
            if part:
                self.spans.append((begin, len(self.text), part))
        self.stack.clear()
        return self.spans


def split_page(data: bytes) -> dict[str, int]:
    """Bytes of each part of one page (UTF-8, as Sphinx writes); they sum to ``len(data)``."""
    text = data.decode("utf-8")
    splitter = _Splitter(text)
    splitter.feed(text)
    parts = dict.fromkeys(PARTS, 0)
    done = 0  # spans are disjoint (the outermost wins); sorted, each counted once
    for start, end, part in sorted(splitter.finish()):
        if start < done:  # an element left open that a later end tag closed: already counted
            start = done
        if end > start:
            parts[part] += len(text[start:end].encode("utf-8"))
            done = end
    parts["other"] += len(data) - sum(parts.values())
    if parts["other"] < 0 or sum(parts.values()) != len(data):
        raise AssertionError(f"parts {parts} do not sum to {len(data)} bytes")
    return parts


class _Reader(HTMLParser):
    """The text a reader reads in a page's content: its text nodes, entities decoded."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0  # open elements since the content started; 0: outside it
        self.bytes = 0

    def handle_starttag(self, tag: str, attr_list: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        if self.depth or _Splitter._starts_content(tag, dict(attr_list)):
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag not in VOID:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.bytes += len(data.encode("utf-8"))


def content_text_bytes(data: bytes) -> int:
    """Bytes of the text of a page's content, without markup or chrome: what no lighter
    markup, navigation or theme can take away."""
    reader = _Reader()
    reader.feed(data.decode("utf-8"))
    reader.close()
    return reader.bytes


# -- one log --------------------------------------------------------------------------------


@dataclass
class Weight:
    log: str
    log_bytes: int  # uncompressed
    pages: int = 0
    html_bytes: int = 0
    all_bytes: int = 0
    parts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PARTS, 0))
    text_bytes: int = 0  # the content's text alone (:func:`content_text_bytes`)
    largest_page: str = ""
    largest_bytes: int = 0
    build_s: float = 0.0
    tlparse_pages: int = 0
    tlparse_html_bytes: int = 0
    tlparse_all_bytes: int = 0
    tlparse_s: float = float("nan")
    error: str = ""


def shown(log: Path) -> str:
    """The log's path under ``tests/data`` (else its name), without torch's prefix."""
    name = log.relative_to(DATA).as_posix() if log.is_relative_to(DATA) else log.name
    return name.replace(PREFIX, "")


def plain_bytes(log: Path) -> bytes:
    data = log.read_bytes()
    return gzip.decompress(data) if log.name.endswith(".gz") else data


def measure(log: Path) -> Weight:
    plain = plain_bytes(log)
    weight = Weight(log=shown(log), log_bytes=len(plain))
    with tempfile.TemporaryDirectory(prefix="bench-weight-") as tmp:
        base = Path(tmp)
        out = base / "out"
        env = {
            **os.environ,
            "XDG_CACHE_HOME": str(base / "cache"),  # the project and model cache: fresh
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        env.pop("CI", None)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "sphinx_torchtrace", "build", str(log), "-o", str(out)]
            + ["--no-browser", "-q"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
        )
        weight.build_s = time.perf_counter() - started
        if done.returncode:
            weight.error = (done.stderr.strip().splitlines() or ["build failed"])[-1]
        pages = sorted(out.rglob("*.html")) if out.is_dir() else []
        weight.pages = len(pages)
        weight.all_bytes = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        for page in pages:
            data = page.read_bytes()
            weight.html_bytes += len(data)
            for part, n in split_page(data).items():
                weight.parts[part] += n
            weight.text_bytes += content_text_bytes(data)
            if len(data) > weight.largest_bytes:
                weight.largest_bytes = len(data)
                weight.largest_page = page.relative_to(out).as_posix()
        tlparse = shutil.which("tlparse")
        if tlparse:
            copy = base / "plain" / log.name.removesuffix(".gz")
            copy.parent.mkdir()
            copy.write_bytes(plain)
            started = time.perf_counter()
            tl = subprocess.run(
                [tlparse, str(copy), "-o", str(base / "tl"), "--overwrite", "--no-browser"],
                capture_output=True,
                text=True,
            )
            weight.tlparse_s = time.perf_counter() - started
            if tl.returncode == 0:
                files = [p for p in (base / "tl").rglob("*") if p.is_file()]
                html = [p for p in files if p.suffix == ".html"]
                weight.tlparse_pages = len(html)
                weight.tlparse_html_bytes = sum(p.stat().st_size for p in html)
                weight.tlparse_all_bytes = sum(p.stat().st_size for p in files)
            else:
                weight.error += " tlparse failed"
    return weight


def default_logs() -> list[Path]:
    found = {p for p in DATA.rglob("*") if p.is_file() and TRACE_LOG.search(p.name)}
    found |= set(DATA.glob("captured/*/*.log"))
    found |= {p for p in DATA.glob("corpus/**/*.log*") if re.search(r"\.log(\.gz)?$", p.name)}
    return sorted(p for p in found if "expected" not in p.relative_to(DATA).parts[:1])


def uncompressed_size(log: Path) -> int:
    if not log.name.endswith(".gz"):
        return log.stat().st_size
    with gzip.open(log, "rb") as f:
        return sum(len(chunk) for chunk in iter(lambda: f.read(1 << 20), b""))


# -- the report -----------------------------------------------------------------------------


def _mb(n: float) -> str:
    return f"{n / 1e6:.2f}"


def _ratio(ours: int, theirs: int) -> str:
    return f"{ours / theirs:.1f}" if theirs else "n/a"


def _shares(parts: dict[str, int], total: int) -> list[str]:
    return [f"{100 * parts[p] / total:.0f}" if total else "" for p in PARTS]


def markdown(rows: list[Weight]) -> str:
    head = (
        "| log | log MB | pages | our HTML MB | tlparse HTML MB | ratio | text ratio | "
        + " | ".join(f"{p} %" for p in PARTS)
        + " | largest page | its KB |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for w in rows:
        lines.append(
            f"| {w.log}{' (' + w.error.strip() + ')' if w.error else ''} | "
            f"{_mb(w.log_bytes)} | {w.pages} | {_mb(w.html_bytes)} | "
            f"{_mb(w.tlparse_html_bytes)} | {_ratio(w.html_bytes, w.tlparse_html_bytes)} | "
            f"{_ratio(w.text_bytes, w.tlparse_html_bytes)} | "
            + " | ".join(_shares(w.parts, w.html_bytes))
            + f" | {w.largest_page} | {w.largest_bytes / 1e3:.0f} |"
        )
    total = {p: sum(w.parts[p] for w in rows) for p in PARTS}
    html = sum(w.html_bytes for w in rows)
    tl = sum(w.tlparse_html_bytes for w in rows)
    largest = max(rows, key=lambda w: w.largest_bytes, default=None)
    biggest = f"{largest.log}: {largest.largest_page}" if largest else ""
    lines.append(
        f"| **all {len(rows)} logs** | {_mb(sum(w.log_bytes for w in rows))} | "
        f"{sum(w.pages for w in rows)} | {_mb(html)} | {_mb(tl)} | {_ratio(html, tl)} | "
        f"{_ratio(sum(w.text_bytes for w in rows), tl)} | "
        + " | ".join(_shares(total, html))
        + f" | {biggest} | {largest.largest_bytes / 1e3 if largest else 0:.0f} |"
    )
    compared = [w for w in rows if w.tlparse_html_bytes]
    within = sum(w.html_bytes <= 2 * w.tlparse_html_bytes for w in compared)
    text_over = sum(w.text_bytes > 2 * w.tlparse_html_bytes for w in compared)
    lines += [
        "",
        f'Within 2x tlparse\'s HTML: {within} of {len(compared)} logs. "text ratio" is the '
        "text of our pages' content alone (no markup, navigation or theme) against "
        f"tlparse's HTML: on {text_over} of {len(compared)} logs it is above 2 by itself.",
    ]
    lines += [
        "",
        "What repeats on every page (bytes per page, averaged over the log's pages), and "
        "all files for reference:",
        "",
        "| log | pages | navigation B/page | head B/page | our all files MB | "
        "tlparse pages | tlparse all files MB | build s | tlparse s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for w in rows:
        n = max(w.pages, 1)
        lines.append(
            f"| {w.log} | {w.pages} | {w.parts['navigation'] / n:.0f} | "
            f"{w.parts['head'] / n:.0f} | {_mb(w.all_bytes)} | {w.tlparse_pages} | "
            f"{_mb(w.tlparse_all_bytes)} | {w.build_s:.1f} | {w.tlparse_s:.2f} |"
        )
    pages = max(sum(w.pages for w in rows), 1)
    lines.append(
        f"| **all** | {sum(w.pages for w in rows)} | {total['navigation'] / pages:.0f} | "
        f"{total['head'] / pages:.0f} | {_mb(sum(w.all_bytes for w in rows))} | "
        f"{sum(w.tlparse_pages for w in rows)} | "
        f"{_mb(sum(w.tlparse_all_bytes for w in rows))} | "
        f"{sum(w.build_s for w in rows):.0f} | {sum(w.tlparse_s for w in rows):.0f} |"
    )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("logs", nargs="*", type=Path, help="logs (default: every test log)")
    parser.add_argument(
        "--min-size", type=int, default=0, help="only logs of this many bytes or more"
    )
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    logs = [p.resolve() for p in args.logs] or default_logs()
    logs = [p for p in logs if uncompressed_size(p) >= args.min_size]
    rows = []
    for i, log in enumerate(logs, 1):
        w = measure(log)
        rows.append(w)
        print(
            f"[{i}/{len(logs)}] {w.log}: {w.pages} pages, {_mb(w.html_bytes)} MB HTML "
            f"(tlparse {_mb(w.tlparse_html_bytes)}), navigation "
            f"{w.parts['navigation'] / max(w.pages, 1):.0f} B/page, "
            f"build {w.build_s:.1f} s {w.error}",
            file=sys.stderr,
            flush=True,
        )
    print(markdown(rows), end="")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
