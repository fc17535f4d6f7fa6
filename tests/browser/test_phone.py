"""On a phone (390 px, Chromium), nothing of any page kind is cut at the screen's edge.

One furo site, built once for this module from real logs of every family: a single
process trace with recompiles, one with compile errors, one with provenance, tlparse's
CUDA-graph input, a trace of two ranks, a run with runtime figures, a debug folder and
a diff of two traces; graphs over 2 KB get pages of their own, so graph and kernel
pages are there too.  Every kind of page it has (the overview, a frame page, a rank's
frame, an attempt, graph and kernel pages, the diff's pages, the debug folder's ...:
two of each, the first and the fullest) is read at 390 px with every fold opened and
every tab shown in turn: no element but code (a code block scrolls inside itself, as
code does) reaches past the screen's right edge, and no table of the extension is
wider than its box (one that scrolls sideways hides its last columns: a compile
directory was 861 px wide in a 390 px screen, the overview's facts cut at the edge).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..conftest import DATA, SHARED
from .conftest import Site, served_site, unavailable

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

WIDTH = 390
LOGS = {
    "recomp.log": SHARED / "recompiles" / "dedicated_log_torch_trace_afr5b1tf.log",
    "err.log": SHARED / "compile_error" / "dedicated_log_torch_trace_fqqib31t.log",
    "prov.log": SHARED / "provenance" / "dedicated_log_torch_trace_0ptegd0d.log",
    "cg.log": SHARED / "tlparse-inputs" / "inputs" / "autotune_with_compile_id.log",
}
FOLDERS = {
    "dist": DATA / "captured" / "multi_rank_gloo",
    "runtime": DATA / "captured" / "runtime_training",
    "dbg": DATA / "captured" / "debug_dir" / "training" / "torch_compile_debug",
    "pair": DATA / "captured" / "pairs" / "graph_break_fixed",
}
CONF_PY = """\
project = "phone"
extensions = ["sphinx_torchtrace"]
html_theme = "furo"
torchtrace_fold_bytes = 2000
"""
INDEX_RST = """\
Phone
=====

.. torchtrace:: recomp.log

.. torchtrace:: err.log

.. torchtrace:: prov.log

.. torchtrace:: cg.log

.. torchtrace:: dist

.. torchtrace:: runtime

.. torchtrace:: dbg

.. torchtrace-diff:: pair/baseline pair/new

.. torchtrace-provenance:: prov [0/0]
"""

#: What reaches past the screen's right edge: any element but code (which scrolls inside
#: itself), and any table of the extension wider than its own box.
CUT_JS = """
() => {
  const width = window.innerWidth, cut = [];
  const main = document.querySelector('[role=main]') || document.querySelector('article')
    || document.body;
  for (const e of main.querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.right <= width + 1) continue;
    if (e.closest('pre, div.highlight, .torchtrace-code, .torchtrace-provenance')) continue;
    cut.push(`${e.tagName.toLowerCase()}.${[...e.classList].join('.')} ends at `
             + `${Math.round(r.right)} px: ${(e.textContent || '').trim().slice(0, 50)}`);
  }
  for (const t of document.querySelectorAll('table.torchtrace-table')) {
    if (t.offsetWidth && t.scrollWidth > t.clientWidth + 1)
      cut.push(`table.${[...t.classList].join('.')} is ${t.scrollWidth} px wide in `
               + `${t.clientWidth} px: ${(t.textContent || '').trim().slice(0, 50)}`);
  }
  return [...new Set(cut)].slice(0, 6);
}
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> Iterator[Site]:
    if importlib.util.find_spec("furo") is None:
        unavailable("the furo theme is not installed (pip install furo)")
    root = tmp_path_factory.mktemp("phone-site")
    src = root / "src"
    src.mkdir()
    for name, log in LOGS.items():
        shutil.copyfile(log, src / name)
    for name, folder in FOLDERS.items():
        shutil.copytree(folder, src / name)
    (src / "conf.py").write_text(CONF_PY, encoding="utf-8")
    (src / "index.rst").write_text(INDEX_RST, encoding="utf-8")
    with served_site(src, root / "html", "phone-site") as served:
        yield served


def page_kinds(html: Path) -> dict[str, list[str]]:
    """Each kind of page (its file name without numbers, its depth, a rank's or not) ->
    the docnames of the first page of that kind and of the fullest."""
    kinds: dict[str, list[Path]] = {}
    for path in sorted((html / "torchtrace").rglob("*.html")):
        rel = path.relative_to(html)
        kind = re.sub(r"[-_]?\d+", "N", path.stem) + f"@{len(rel.parts)}"
        kind += ":rank" if re.search(r"/rank\d", rel.as_posix()) else ""
        kinds.setdefault(kind, []).append(path)
    return {
        kind: sorted(
            {
                p.relative_to(html).with_suffix("").as_posix()
                for p in (paths[0], max(paths, key=_size))
            }
        )
        for kind, paths in kinds.items()
    }


def _size(path: Path) -> int:
    return path.stat().st_size


def cut_at_the_edge(page: Page) -> list[str]:
    """What reaches past the edge with every fold open, in each tab shown in turn."""
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
    page.wait_for_timeout(50)  # the toggle events: tables in folds are measured as they open
    found = list(page.evaluate(CUT_JS))
    labels = page.locator("label.sd-tab-label")
    for i in range(labels.count()):
        if labels.nth(i).is_visible():
            labels.nth(i).click()
            found += page.evaluate(CUT_JS)
    return sorted(set(found))


def test_no_page_kind_is_cut_on_a_phone(site: Site, browser: Browser) -> None:
    kinds = page_kinds(site.html)
    # the site has what the module promises: overviews, frames, ranks, graphs, kernels ...
    assert len(kinds) >= 15, sorted(kinds)
    assert any(k.endswith(":rank") for k in kinds) and any("graph" in k for k in kinds)
    context = browser.new_context(viewport={"width": WIDTH, "height": 844})
    try:
        page = context.new_page()
        page.set_default_timeout(15_000)
        problems = []
        for docnames in [["index"], *kinds.values()]:
            for docname in docnames:
                page.goto(site.page_url(docname), wait_until="load")
                problems += [f"{docname}: {c}" for c in cut_at_the_edge(page)]
    finally:
        context.close()
    assert not problems, "\n".join(problems)


def test_a_wide_table_is_stacked_with_its_headings(site: Site, browser: Browser) -> None:
    """The compile directory of two ranks at 390 px: one block per compile, each value led
    by its column's heading; at 1400 px, the table as it is."""
    for width, stacked in ((WIDTH, True), (1400, False)):
        context = browser.new_context(viewport={"width": width, "height": 900})
        try:
            page = context.new_page()
            page.goto(site.page_url("torchtrace/dist/index"), wait_until="load")
            table = page.locator("#compile-directory table.torchtrace-table").first
            classes = table.get_attribute("class") or ""
            assert ("torchtrace-stacked" in classes) is stacked, (width, classes)
            cell = table.locator("tbody td").nth(2)  # the first compile's status
            if stacked:  # labelled for stacking on a narrow screen (a wide one: no work)
                assert cell.get_attribute("data-label") == "Status"
                before = cell.evaluate("e => getComputedStyle(e, '::before').content")
                assert before == '"Status: "', before
                box = table.bounding_box()
                assert box is not None and box["x"] + box["width"] <= width
        finally:
            context.close()
