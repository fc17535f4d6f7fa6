"""Pages of real traces, read in Chromium: the answer near the top, no sideways page, no dead end.

One furo site, built once for this module by ``sphinx-build`` from a sample of the capture
corpus (``tests/data/corpus``): six small traces with recompiles (``recompile_limit``,
``automatic_dynamic``, ``decoder_lm``), graph breaks and chained breaks
(``graph_break_kinds``, read gzipped, ``chained_break_loop``) and compile errors
(``fullgraph_failures``).  The model (``plan_trace``) says which pages should exist and what
each frame is, and the pages are checked against it:

* A reader opens a frame page to learn why it broke, failed or compiled again: on a
  1400 x 900 window the top of the section holding that answer (``#failures`` for a graph
  break or an error, ``#changed``, "Why it compiled again", for a recompile) starts within
  the first two screens (1800 px from the top), on up to 40 such pages spread over the
  traces.
* At 390 px (a phone) and 1400 px no page scrolls sideways as a whole (the overview of each
  trace and ten frame pages, the fullest ones): a wide table or code block scrolls inside
  its own box, and no table cell is cut by a box hiding what overflows (as in
  ``test_layout.py``).  Furo's content column is checked too: on a phone it scrolls sideways
  by itself, so the page's own width would never show what overflows it.
* Following "next" from a trace's first frame page visits every frame page the model lists
  (``listed_frames``) once, in compile order, and never the ``[-/-]`` page (records outside
  any compilation, which is no frame).

Without the corpus in the checkout the tests skip; without a browser they skip (fail under
``CI=true``) through conftest's ``browser`` fixture.
"""

from __future__ import annotations

import functools
import importlib.util
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from sphinx_torchtrace.site.plan import FramePlan, TracePlan, plan_trace
from sphinx_torchtrace.trace import load_trace

from ..conftest import DATA
from .conftest import Site, served_site, unavailable

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

CORPUS = DATA / "corpus"
#: Corpus folders sampled (one log each, under 4 MB on disk): label -> why it is here.
TRACES = {
    "recompile_limit": "recompiles up to the limit, then errors",
    "graph_break_kinds": "one graph break of each kind, gzipped",
    "chained_break_loop": "chained graph breaks, a compile error",
    "fullgraph_failures": "compile errors under fullgraph=True",
    "decoder_lm": "a recompile of a language model",
    "automatic_dynamic": "recompiles for automatic dynamic shapes",
}
DESKTOP = {"width": 1400, "height": 900}
#: The answer must start within this many screens of the desktop window.
SCREENS = 2
#: At most this many frame pages are checked for their answer, spread over the traces.
ANSWER_PAGES = 40
WIDTHS = (390, 1400)
#: Frame pages checked for sideways scrolling, besides each trace's overview.
OVERFLOW_FRAMES = 10
#: Each status's answer: the id of the section holding it.
ANSWER_SECTION = {"break": "failures", "error": "failures", "recompile": "changed"}

CONF_PY = """\
project = "corpus pages"
extensions = ["sphinx_torchtrace"]
html_theme = "furo"
exclude_patterns = ["_build"]
"""

#: Top of each section (by id) from the top of the page, ``None`` where the page has none:
#: ``getBoundingClientRect().top + scrollY``, as ``bounding_box()["y"] + scrollY``.
SECTION_TOPS_JS = """
ids => Object.fromEntries(ids.map(id => {
  const e = document.getElementById(id);
  return [id, e ? e.getBoundingClientRect().top + window.scrollY : null];
}))
"""
#: The page's width against the window's; furo's content column (``.content``) against its
#: box, since on a phone that column scrolls sideways by itself (``overflow-x: auto``) and
#: the page's own width never shows what overflows it; table cells cut by a box hiding
#: overflow (as in test_layout.py); and, for each, the widest elements past the right edge
#: that no box of their own scrolls or clips: what makes it scroll sideways, when it does.
OVERFLOW_JS = """
() => {
  const past = (root, edge) => {
    const found = [];
    for (const e of root.querySelectorAll('*')) {
      const r = e.getBoundingClientRect();
      if (r.width === 0 || r.right <= edge + 1 || getComputedStyle(e).position === 'fixed')
        continue;
      let box = e.parentElement;
      while (box && box !== root && getComputedStyle(box).overflowX === 'visible')
        box = box.parentElement;
      if (box && box !== root) continue;  // scrolls or is clipped inside a box of its own
      found.push({what: e.tagName.toLowerCase() + (e.className ? '.' + e.className : '')
                        + (e.id ? '#' + e.id : ''),
                  width: Math.round(r.width), right: Math.round(r.right)});
    }
    found.sort((a, b) => b.right - a.right);
    return found.slice(0, 3);
  };
  const width = window.innerWidth;
  const page = document.documentElement.scrollWidth;
  const content = document.querySelector('.content');
  const column = content ? {scroll: content.scrollWidth, client: content.clientWidth} : null;
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
  return {
    page, width, column, cut: cut.slice(0, 5),
    pagePast: page > width + 1 ? past(document.body, width) : [],
    columnPast: column && column.scroll > column.client + 1
      ? past(content, content.getBoundingClientRect().right) : [],
  };
}
"""
#: The page's title, whether it has a previous/next line, and the index, among that line's
#: links, of the one after " · next: " (-1 on the last frame).
STEP_JS = """
() => {
  const box = document.querySelector('.torchtrace-prev-next');
  const next = box ? [...box.querySelectorAll('a')].findIndex(a => {
    const before = a.previousSibling;
    return !!before && before.nodeType === Node.TEXT_NODE && /next:\\s*$/.test(before.textContent);
  }) : -1;
  return {title: document.title, box: !!box, next};
}
"""


def corpus_log(label: str) -> Path | None:
    """The one log of a corpus folder (``.log`` or ``.log.gz``), ``None`` if it is absent."""
    folder = CORPUS / label
    if not folder.is_dir():
        return None
    logs = sorted(p for p in folder.glob("dedicated_log_torch_trace*") if p.is_file())
    logs = [p for p in logs if p.suffix == ".log" or p.name.endswith(".log.gz")]
    return logs[0] if len(logs) == 1 else None


def log_suffix(log: Path) -> str:
    """The suffix of the log's copy in the site's sources: ``.gz`` kept where there is one."""
    return ".log.gz" if log.name.endswith(".gz") else ".log"


@functools.cache
def planned(label: str) -> TracePlan:
    """The model's plan of one sampled trace: the pages, and what each frame is."""
    log = corpus_log(label)
    assert log is not None, f"no single log in {CORPUS / label}"
    return plan_trace(label, load_trace(log), "torchtrace")


def index_rst(logs: dict[str, str]) -> str:
    directives = "".join(
        f".. torchtrace:: logs/{name}\n   :name: {label}\n\n" for label, name in logs.items()
    )
    return f"Corpus pages\n============\n\n{directives}"


@pytest.fixture(scope="module")
def corpus_site(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> Iterator[Site]:
    """The sampled traces' site (furo), built once by sphinx-build and served over HTTP.

    Asks for the browser first so that a run without one skips before the build.
    """
    logs = {label: corpus_log(label) for label in TRACES}
    missing = [label for label, log in logs.items() if log is None]
    if missing:
        pytest.skip(f"no capture corpus in this checkout ({', '.join(missing)})")
    if importlib.util.find_spec("furo") is None:
        unavailable("the furo theme is not installed (pip install furo)")
    root = tmp_path_factory.mktemp("corpus-site")
    srcdir = root / "src"
    (srcdir / "logs").mkdir(parents=True)
    names: dict[str, str] = {}
    for label, log in logs.items():
        assert log is not None
        names[label] = label + log_suffix(log)
        shutil.copyfile(log, srcdir / "logs" / names[label])
    (srcdir / "conf.py").write_text(CONF_PY, encoding="utf-8")
    (srcdir / "index.rst").write_text(index_rst(names), encoding="utf-8")
    with served_site(srcdir, root / "html", "corpus-site") as site:
        yield site


@pytest.fixture
def visit(browser: Browser) -> Iterator[Callable[..., Page]]:
    """``visit(site, docname, width=)``: the page in a 900 px high window, one tab per width."""
    tabs: dict[int, tuple[Any, Page]] = {}

    def go(site: Site, docname: str, *, width: int = DESKTOP["width"]) -> Page:
        if width not in tabs:
            context = browser.new_context(
                viewport={"width": width, "height": DESKTOP["height"]},
                color_scheme="light",
                reduced_motion="reduce",
            )
            context.add_init_script("try { localStorage.setItem('theme', 'light') } catch {}")
            page = context.new_page()
            page.set_default_timeout(15_000)
            tabs[width] = (context, page)
        shown = tabs[width][1]
        shown.goto(site.page_url(docname), wait_until="load")
        return shown

    yield go
    for context, _ in tabs.values():
        context.close()


def answers_sought(frame: FramePlan) -> list[str]:
    """What a reader opens this frame page to learn: ``break``, ``error``, ``recompile``."""
    compile_ = frame.compile
    sought = [compile_.status] if compile_.status in ("break", "error") else []
    if compile_.recompile_reasons:
        sought.append("recompile")
    return sought


def spread(items: list[FramePlan], count: int) -> list[FramePlan]:
    """``count`` of the items, evenly spaced, the first and the last among them."""
    if count >= len(items):
        return list(items)
    if count <= 1:
        return items[:count]
    return [items[round(i * (len(items) - 1) / (count - 1))] for i in range(count)]


@functools.cache
def answer_sample() -> dict[str, list[FramePlan]]:
    """Up to ``ANSWER_PAGES`` frames with an answer to look for, shared fairly by the traces:
    a trace with few such frames gives all of them, the others share what is left."""
    candidates = {
        label: [f for f in planned(label).listed_frames if answers_sought(f)] for label in TRACES
    }
    share: dict[str, int] = {}
    left = ANSWER_PAGES
    pending = sorted(candidates, key=lambda label: len(candidates[label]))
    while pending:
        label = pending.pop(0)
        share[label] = min(len(candidates[label]), left // (len(pending) + 1))
        left -= share[label]
    return {label: spread(candidates[label], share[label]) for label in TRACES}


def answer_problems(frame: FramePlan, tops: dict[str, float | None]) -> list[str]:
    """Why this frame page does not show its answers within the first two screens."""
    limit = SCREENS * DESKTOP["height"]
    problems = []
    for sought in answers_sought(frame):
        section = ANSWER_SECTION[sought]
        top = tops[section]
        if top is None:
            found = [f"#{s}" for s, y in tops.items() if y is not None] or ["neither"]
            problems.append(
                f"{frame.name} ({frame.docname}): status {frame.compile.status}, a {sought},"
                f" but no #{section} section on the page (it has {' and '.join(found)})"
            )
        elif top > limit:
            problems.append(
                f"{frame.name} ({frame.docname}): #{section} (the {sought}) starts at"
                f" {top:.0f} px, {top - limit:.0f} px below the first {SCREENS} screens"
            )
    return problems


@pytest.mark.parametrize("label", list(TRACES))
def test_the_answer_is_within_two_screens(
    corpus_site: Site, visit: Callable[..., Page], label: str
) -> None:
    frames = answer_sample()[label]
    assert frames, f"{label}: no break, error or recompile among its frames ({TRACES[label]})"
    problems = []
    for frame in frames:
        page = visit(corpus_site, frame.docname)
        tops = page.evaluate(SECTION_TOPS_JS, sorted(set(ANSWER_SECTION.values())))
        problems += answer_problems(frame, tops)
    assert not problems, "\n".join(problems)


def fullest_frames(site: Site) -> list[str]:
    """Docnames of the frame pages most likely to be wide: the largest HTML file of each
    trace, then the largest of the others, ``OVERFLOW_FRAMES`` in all."""

    def size(frame: FramePlan) -> int:
        return (site.html / f"{frame.docname}.html").stat().st_size

    by_trace = {
        label: sorted(planned(label).paged_frames, key=size, reverse=True) for label in TRACES
    }
    chosen = [frames[0] for frames in by_trace.values() if frames]
    others = sorted((f for frames in by_trace.values() for f in frames[1:]), key=size, reverse=True)
    chosen += others[: max(0, OVERFLOW_FRAMES - len(chosen))]
    return [f.docname for f in chosen]


def culprits(found: list[dict[str, Any]]) -> str:
    """The elements past an edge, as a message says them."""
    return (
        ", ".join(
            f"{c['what']} ({c['width']} px wide, right edge at {c['right']} px)" for c in found
        )
        or "nothing found"
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_no_page_scrolls_sideways(
    corpus_site: Site, visit: Callable[..., Page], width: int
) -> None:
    docnames = [planned(label).index_docname for label in TRACES] + fullest_frames(corpus_site)
    problems = []
    for docname in docnames:
        measured = visit(corpus_site, docname, width=width).evaluate(OVERFLOW_JS)
        column = measured["column"]
        if column is None:
            problems.append(f"{docname}: no .content column (is the theme furo?)")
        elif column["scroll"] > column["client"] + 1:
            problems.append(
                f"{docname}: the content column is {column['scroll']} px wide in its"
                f" {column['client']} px box; past its edge: {culprits(measured['columnPast'])}"
            )
        if measured["page"] > measured["width"] + 1:
            problems.append(
                f"{docname}: page {measured['page']} px wide in a {width} px window;"
                f" past its edge: {culprits(measured['pagePast'])}"
            )
        problems += [f"{docname}: {cut}" for cut in measured["cut"]]
    assert not problems, "\n".join(problems)


def page_docname(site: Site, page: Page) -> str:
    url = page.url.split("#", 1)[0].split("?", 1)[0]
    assert url.startswith(site.url) and url.endswith(".html"), url
    return url[len(site.url) : -len(".html")]


@pytest.mark.parametrize("label", list(TRACES))
def test_next_visits_every_frame_once(
    corpus_site: Site, visit: Callable[..., Page], label: str
) -> None:
    """'next' leads through one function's versions; started at each function's first page
    not yet seen, the chains visit every frame page once, in the model's order."""
    plan = planned(label)
    listed = [f.docname for f in plan.listed_frames]
    assert listed, f"{label}: no frame pages"
    visited: list[str] = []
    while unseen := [d for d in listed if d not in visited]:
        page = visit(corpus_site, unseen[0])
        chain: list[str] = []
        while True:
            docname = page_docname(corpus_site, page)
            step = page.evaluate(STEP_JS)
            came_from = f"'next' from {chain[-1]}" if chain else f"the page {unseen[0]}"
            assert "[-/-]" not in step["title"], (
                f"{label}: {came_from} is {docname}, titled {step['title']!r}"
            )
            assert docname not in visited, f"{label}: {came_from} is {docname} again: {visited}"
            visited.append(docname)
            chain.append(docname)
            assert len(visited) <= len(listed), f"{label}: more pages than frames: {visited}"
            assert step["box"], f"{label}: {docname} has no previous/next line"
            if step["next"] < 0:
                break
            link = page.locator(".torchtrace-prev-next").first.locator("a").nth(step["next"])
            with page.expect_navigation(wait_until="domcontentloaded"):
                link.click()
        assert chain == [d for d in listed if d in chain], f"{label}: out of order: {chain}"
    assert sorted(visited, key=listed.index) == listed, f"{label}: visited {visited}"
