"""Pages fit a phone and a desktop in four themes, light and dark (issue 10).

One site per theme (furo, pydata-sphinx-theme, sphinx-book-theme, sphinx-rtd-theme), built
once per session from real logs: ``simple``, ``recomp`` (recompiles, the tallest frame
pages, large artifacts), ``dist`` (two ranks) and ``prov`` (a provenance block on the index
page).  At 390 px and 1400 px, light and dark where the theme has dark, a sample of pages
(overview, the tallest frame page, a graph page, a kernel page, a provenance view, the
multi-rank overview and a rank's frame) must not scroll sideways as a whole: a table or
code block scrolls inside itself, a long name wraps, and no cell is cut by a box that
hides what overflows.  The same pages name their trace (and rank) in their title, frames
link to their neighbours, the recompile diff is red and green, and artifacts too large to
show are downloads that exist.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.request import urlopen

import pytest

from sphinx_torchtrace.site.plan import TracePlan, plan_trace
from sphinx_torchtrace.trace import load_trace

from ..conftest import DATA, SHARED
from .conftest import REPO, Site, _QuietHandler, unavailable

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

#: theme -> (module to import, whether it has a dark mode)
THEMES = {
    "furo": ("furo", True),
    "pydata_sphinx_theme": ("pydata_sphinx_theme", True),
    "sphinx_book_theme": ("sphinx_book_theme", True),
    "sphinx_rtd_theme": ("sphinx_rtd_theme", False),
}
WIDTHS = (390, 1400)
LOGS = {
    "simple": SHARED / "simple" / "dedicated_log_torch_trace_5aek85xk.log",
    "recomp": SHARED / "recompiles" / "dedicated_log_torch_trace_afr5b1tf.log",
    "prov": SHARED / "provenance" / "dedicated_log_torch_trace_0ptegd0d.log",
}
DIST = DATA / "captured" / "multi_rank_gloo"
INDEX_RST = """\
Layout
======

.. torchtrace:: logs/simple.log
   :name: simple

.. torchtrace:: logs/recomp.log
   :name: recomp

.. torchtrace:: logs/dist
   :name: dist

.. torchtrace:: logs/prov.log
   :name: prov

Provenance
----------

.. torchtrace-provenance:: prov [0/0]
"""
#: The frame whose recompile diff is checked: [0/1] compiled again after [0/0].
DIFF_PAGE = "torchtrace/recomp/frame-0-1"

#: Elements the page scrolls sideways for, or table cells cut by a box hiding overflow.
LAYOUT_JS = """
() => {
  const width = window.innerWidth;
  const page = document.documentElement.scrollWidth;
  const cut = [];
  for (const cell of document.querySelectorAll('table.torchtrace-table td')) {
    if (cell.scrollWidth > cell.clientWidth + 1 && getComputedStyle(cell).overflowX !== 'visible')
      cut.push('cell hides its text: ' + cell.textContent.slice(0, 60));
    let box = cell.parentElement;
    while (box && box !== document.body && getComputedStyle(box).overflowX === 'visible')
      box = box.parentElement;
    if (!box || box === document.body) continue;
    const how = getComputedStyle(box).overflowX;
    const right = cell.getBoundingClientRect().right;
    if ((how === 'hidden' || how === 'clip') && right > box.getBoundingClientRect().right + 1)
      cut.push('cell cut by ' + box.tagName + '.' + box.className + ': '
               + cell.textContent.slice(0, 60));
  }
  return {page, width, cut: cut.slice(0, 5)};
}
"""
DARK_JS = """
() => document.body.dataset.theme === 'dark' || document.documentElement.dataset.theme === 'dark'
"""


def _build(theme: str, root: Path) -> Path:
    """The layout site in ``theme``, built by sphinx-build in a child process."""
    src = root / "src"
    (src / "logs" / "dist").mkdir(parents=True)
    for label, log in LOGS.items():
        shutil.copyfile(log, src / "logs" / f"{label}.log")
    for log in DIST.glob("*.log"):
        shutil.copyfile(log, src / "logs" / "dist" / log.name)
    # graphs over 2 KB on pages of their own: folds and graph and kernel pages both laid out
    conf = (
        f'project = "layout"\nextensions = ["sphinx_torchtrace"]\nhtml_theme = "{theme}"\n'
        "torchtrace_fold_bytes = 2000\n"
    )
    (src / "conf.py").write_text(conf, encoding="utf-8")
    (src / "index.rst").write_text(INDEX_RST, encoding="utf-8")
    html = root / "html"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    built = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(html)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, f"sphinx-build ({theme}) failed:\n{built.stdout}\n{built.stderr}"
    return html


@pytest.fixture(scope="session")
def theme_site(
    tmp_path_factory: pytest.TempPathFactory, browser: Browser
) -> Iterator[Callable[[str], Site]]:
    """``theme_site("furo")``: that theme's site, built on first use and served over HTTP."""
    servers: list[tuple[http.server.ThreadingHTTPServer, threading.Thread]] = []

    @functools.cache
    def make(theme: str) -> Site:
        module, _ = THEMES[theme]
        if importlib.util.find_spec(module) is None:
            unavailable(f"the {theme} theme is not installed (pip install -e '.[test]')")
        root = tmp_path_factory.mktemp(f"layout-{theme}")
        html = _build(theme, root)
        handler = functools.partial(_QuietHandler, directory=str(html))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, name=f"layout-{theme}", daemon=True)
        thread.start()
        servers.append((server, thread))
        return Site(srcdir=root / "src", html=html, url=f"http://127.0.0.1:{server.server_port}/")

    yield make
    for server, thread in servers:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@functools.cache
def planned(label: str) -> TracePlan:
    return plan_trace(label, load_trace(LOGS[label]), "torchtrace", fold_bytes=2000)


def sample_pages(html: Path) -> dict[str, str]:
    """What each sampled page is -> its docname, found in the built site."""
    frames = sorted((html / "torchtrace" / "recomp").glob("frame-*.html"))
    tallest = max(frames, key=lambda p: p.stat().st_size)  # the most content
    details = html / "torchtrace" / "recomp" / tallest.stem
    ranked = sorted((html / "torchtrace" / "dist").glob("rank*/frame-*.html"))
    rank1 = [p for p in ranked if p.stem != "frame-none"][-1]  # [-/-] is no compiled frame

    def docname(path: Path) -> str:
        return path.relative_to(html).with_suffix("").as_posix()

    return {
        "overview": "torchtrace/recomp/index",
        "tallest frame": docname(tallest),
        "graph": docname(sorted(details.glob("graph-*.html"))[0]),
        "kernel": docname(sorted(details.glob("kernel-*.html"))[0]),
        "provenance": "index",
        "provenance frame": "torchtrace/prov/frame-0-0",
        "multi-rank overview": "torchtrace/dist/index",
        "rank frame": docname(rank1),
    }


def schemes() -> list[Any]:
    out = []
    for theme, (_, has_dark) in THEMES.items():
        for width in WIDTHS:
            for dark in (False, True) if has_dark else (False,):
                scheme = "dark" if dark else "light"
                out.append(pytest.param(theme, width, dark, id=f"{theme}-{width}-{scheme}"))
    return out


@pytest.fixture
def visit(browser: Browser) -> Iterator[Callable[..., Page]]:
    """``visit(site, docname, width=, dark=)``: one browser context per test, reused."""
    contexts: dict[tuple[int, bool], Any] = {}

    def go(site: Site, docname: str, *, width: int = 1400, dark: bool = False) -> Page:
        key = (width, dark)
        if key not in contexts:
            context = browser.new_context(
                viewport={"width": width, "height": 900},
                color_scheme="dark" if dark else "light",
                reduced_motion="reduce",
            )
            mode = "dark" if dark else "light"
            # furo, pydata and book themes keep the reader's choice under "theme"
            context.add_init_script(
                f"try {{ localStorage.setItem('theme', '{mode}'); "
                f"localStorage.setItem('mode', '{mode}') }} catch {{}}"
            )
            page = context.new_page()
            page.set_default_timeout(15_000)
            contexts[key] = (context, page)
        shown: Page = contexts[key][1]
        shown.goto(site.page_url(docname), wait_until="load")
        return shown

    yield go
    for context, _ in contexts.values():
        context.close()


@pytest.mark.parametrize(("theme", "width", "dark"), schemes())
def test_pages_fit_the_window(
    theme_site: Callable[[str], Site],
    visit: Callable[..., Page],
    theme: str,
    width: int,
    dark: bool,
) -> None:
    site = theme_site(theme)
    problems = []
    for what, docname in sample_pages(site.html).items():
        page = visit(site, docname, width=width, dark=dark)
        if dark:
            assert page.evaluate(DARK_JS), f"{theme} did not switch to dark on {docname}"
        measured = page.evaluate(LAYOUT_JS)
        if measured["page"] > measured["width"]:
            problems.append(
                f"{what} ({docname}): page {measured['page']} px wide in a {width} px window"
            )
        problems.extend(f"{what} ({docname}): {c}" for c in measured["cut"])
    assert not problems, "\n".join(problems)


#: Words of table headers (and of a facts table's labels) that a line break splits: each
#: word must sit on one line.
SPLIT_HEADER_WORDS_JS = """
() => {
  const split = [];
  const cells = 'table.torchtrace-table th, table.torchtrace-header td:first-child';
  for (const th of document.querySelectorAll(cells)) {
    const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (tops.size > 1) split.push(match[0]);
      }
    }
  }
  return split;
}
"""


@pytest.mark.parametrize("theme", list(THEMES))
def test_table_headers_never_break_inside_a_word(
    theme_site: Callable[[str], Site], visit: Callable[..., Page], theme: str
) -> None:
    site = theme_site(theme)
    problems = []
    for what, docname in sample_pages(site.html).items():
        for width in (390, 1400):
            split = visit(site, docname, width=width).evaluate(SPLIT_HEADER_WORDS_JS)
            if split:
                problems.append(f"{what} ({docname}) at {width} px: {split}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("theme", list(THEMES))
def test_titles_name_trace_and_rank(
    theme_site: Callable[[str], Site], visit: Callable[..., Page], theme: str
) -> None:
    """A title (tab and heading) says which trace a page belongs to, and which rank."""
    site = theme_site(theme)
    problems = []
    for what, docname in sample_pages(site.html).items():
        if docname == "index":
            continue  # the user's own page
        parts = docname.split("/")
        wanted = [parts[1], *(p for p in parts[2:3] if p.startswith("rank"))]
        page = visit(site, docname)
        heading = page.locator("h1").first.inner_text()
        for name in wanted:
            if name not in page.title() or name not in heading:
                problems.append(f"{what}: {name!r} not in title {page.title()!r} / {heading!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("theme", list(THEMES))
def test_frames_link_previous_and_next(
    theme_site: Callable[[str], Site], visit: Callable[..., Page], theme: str
) -> None:
    site = theme_site(theme)
    # a recompiled function's second version links its first; a rank's frame page has its
    # box too, though previous and next stay within one function's versions (maybe none)
    pages = {"torchtrace/recomp/frame-0-1": True, sample_pages(site.html)["rank frame"]: False}
    for docname, versions in pages.items():
        page = visit(site, docname, width=390)
        box = page.locator(".torchtrace-prevnext, .torchtrace-prev-next").first
        assert box.is_visible(), f"{docname}: no previous/next links"
        hrefs = box.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
        assert hrefs, f"{docname}: no links in its previous/next box"
        if versions:
            assert any("frame-0-0" in h for h in hrefs), f"{docname}: no link to [0/0] in {hrefs}"


def _rgb(css: str) -> tuple[int, ...]:
    inner = css[css.index("(") + 1 : css.index(")")].replace(",", " ").split()
    return tuple(round(float(v)) for v in inner[:3])


@pytest.mark.parametrize(
    ("theme", "dark"),
    [
        pytest.param(t, d, id=f"{t}-{'dark' if d else 'light'}")
        for t, (_, has_dark) in THEMES.items()
        for d in ((False, True) if has_dark else (False,))
    ],
)
def test_diff_is_red_and_green(
    theme_site: Callable[[str], Site], visit: Callable[..., Page], theme: str, dark: bool
) -> None:
    """Deleted lines red-ish, added lines green-ish, whatever the theme's palette."""
    page = visit(theme_site(theme), DIFF_PAGE, dark=dark)
    diff = page.locator(".torchtrace-code.highlight-diff").first
    deleted = _rgb(diff.locator(".gd").first.evaluate("e => getComputedStyle(e).color"))
    added = _rgb(diff.locator(".gi").first.evaluate("e => getComputedStyle(e).color"))
    r, g, b = deleted
    assert r > g + 40 and r > b + 40, f"deleted lines are {deleted}, not red"
    r, g, b = added
    assert g > r + 40 and g > b + 40, f"added lines are {added}, not green"


def test_large_artifacts_are_downloads(
    theme_site: Callable[[str], Site], visit: Callable[..., Page]
) -> None:
    """An artifact too large to show links its raw file, and the file is there."""
    site = theme_site("furo")
    frame = next(f for f in planned("recomp").frames if f.downloads)
    page = visit(site, frame.docname)
    for raw in frame.downloads:
        name = Path(raw.raw_path).name
        link = page.locator(f'a[href$="/{name}"]').first
        assert link.count(), f"{frame.docname}: no link to {name} ({raw.artifact.name})"
        href = link.evaluate("a => a.href")
        with urlopen(href) as response:  # noqa: S310 - the test's own server
            assert response.status == 200 and response.read(1)


def test_provenance_expands_to_the_window(
    theme_site: Callable[[str], Site], visit: Callable[..., Page]
) -> None:
    """In furo's narrow column the panes cut lines; expanded, three panes share the window
    and the longest line of the post-grad graph is wider than before; Escape returns."""
    page = visit(theme_site("furo"), "index", width=1400)
    block = page.locator(".torchtrace-provenance").first
    pane = block.locator('.torchtrace-pane[data-pane="post"] pre.torchtrace-pane-body')
    before = pane.evaluate("e => e.clientWidth")
    button = block.locator("button.torchtrace-provenance-expand")
    button.click()
    assert button.get_attribute("aria-pressed") == "true"
    box = block.bounding_box()
    assert box is not None and box["width"] >= 1300, box
    after = pane.evaluate("e => e.clientWidth")
    assert after > before * 1.1, (before, after)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    block.locator('.torchtrace-pane[data-pane="post"]').focus()
    page.keyboard.press("Escape")
    assert button.get_attribute("aria-pressed") == "false"
    assert pane.evaluate("e => e.clientWidth") == before


#: Names in table cells (code literals of one word: a function, a file) split into lines
#: shorter than 12 characters: a function name read 8 characters a line on a phone.  (A
#: source line wraps at its spaces, as text does.)
CHOPPED_NAMES_JS = """
() => {
  const chopped = [];
  for (const code of document.querySelectorAll('table.torchtrace-table td code.literal')) {
    const text = code.textContent.trim();
    if (/\\s/.test(text)) continue;
    const range = document.createRange();
    range.selectNodeContents(code);
    const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
    if (lines > 1 && text.length / lines < 12) chopped.push(`${text} (${lines} lines)`);
  }
  return chopped;
}
"""


@pytest.mark.parametrize("theme", list(THEMES))
def test_names_in_tables_read_on_a_phone(
    theme_site: Callable[[str], Site], visit: Callable[..., Page], theme: str
) -> None:
    site = theme_site(theme)
    problems = []
    for what, docname in sample_pages(site.html).items():
        chopped = visit(site, docname, width=390).evaluate(CHOPPED_NAMES_JS)
        if chopped:
            problems.append(f"{what} ({docname}): {chopped[:5]}")
    assert not problems, "\n".join(problems)
