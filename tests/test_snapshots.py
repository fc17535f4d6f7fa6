"""Snapshots of what users get: the doctrees of one small trace's pages, a file per
section (``test_snapshots/<trace>/<page>/<section>.xml``), and their stubs.

A change to a page view, to the blocks-to-nodes layer or to names shows here as a
diff a reviewer can read (``pytest --force-regen`` rewrites the files after a
deliberate change).  The doctrees are Sphinx's own pickled documents, printed with
docutils' ``pformat`` after the build's paths are taken out.  They depend on the
docutils version, so they are pinned in the default test environment only: the
version-matrix sessions skip the ``snapshot`` marker.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from docutils import nodes
from pytest_regressions.file_regression import FileRegressionFixture
from sphinx.testing.util import SphinxTestApp

from .conftest import SiteMaker

pytestmark = pytest.mark.snapshot

#: The pages of the default site (small graphs and their kernels folded on the frame page),
#: and the graph and kernel pages of the same trace with every graph on a page of its own
#: (what a graph too large to fold gets); each by its snapshot folder, ``<trace>/<page>``.
PAGES = {
    "simple/overview": "torchtrace/simple/index",
    "simple/frame-0-0": "torchtrace/simple/frame-0-0",
}
PAGED = {
    "simple/graph-dynamo-output-graph": "torchtrace/simple/frame-0-0/graph-dynamo-output-graph",
    "simple/kernel-cpp-fused-relu-0": "torchtrace/simple/frame-0-0/kernel-cpp-fused-relu-0",
}


@pytest.fixture(scope="module")
def simple_site(built_site: Callable[..., SphinxTestApp]) -> SphinxTestApp:
    return built_site("simple", "html")


@pytest.fixture(scope="module")
def paged_site(built_site: Callable[..., SphinxTestApp]) -> SphinxTestApp:
    return built_site("simple", "html", confoverrides={"torchtrace_fold_bytes": 0})


def _normalized(text: str, srcdir: Path) -> str:
    text = text.replace(str(srcdir), "<srcdir>")
    # the page names the bundled log relatively, through however deep the temp folder is
    text = re.sub(r"(?:\.\./)+\S*?tests/data/", "<data>/", text)
    # the extension's code fingerprint in each stub changes with every edit
    text = re.sub(r"sphinx-torchtrace [\d.]+ \([0-9a-f]{12}\)", "sphinx-torchtrace", text)
    # the overview's "Report" row: the version and the day the pages were made
    made = r"made by sphinx-torchtrace \S+, \d{4}-\d\d-\d\d"
    return re.sub(made, "made by <version>, <day>", text)


#: A section whose snapshot would be longer than this (lines) is split into its own
#: sections, so that each file stays small enough to review.
SECTION_LINES = 300
SNAPSHOTS = Path(__file__).parent / "test_snapshots"


def sections(node: nodes.Element, name: str = "") -> Iterator[tuple[str, str]]:
    """(file name, pformat) of a page's parts, each named by what it shows: the whole page
    (``page``) where it is short; else what comes before its first section (``head``, or a
    file a block where that is long: ``head.fold-full-compile-configuration``), then each
    section by its anchor (``artifacts``), a long one split the same way
    (``artifacts.title``, ``artifacts.fold-dynamo-output-graph``)."""
    subsections = [c for c in node.children if isinstance(c, nodes.section)]
    text = node.pformat()
    if text.count("\n") <= SECTION_LINES:
        yield name or "page", text
        return
    head = node.copy()  # the node itself, with what is not a section
    head.extend(c.deepcopy() for c in node.children if not isinstance(c, nodes.section))
    before = f"{name}." if name else "head."
    if head.pformat().count("\n") <= SECTION_LINES:
        yield before + "head" if name else "head", head.pformat()
    else:  # a long run of blocks (folds of graphs): a file a block, in page order
        for block, child in zip(block_names(head.children), head.children, strict=True):
            yield before + block, child.pformat()
    for child in subsections:
        yield from sections(child, f"{name}.{child['ids'][0]}" if name else child["ids"][0])


#: Words of what a block shows that its file name keeps.
NAME_WORDS = 6


def block_names(blocks: Sequence[nodes.Node]) -> list[str]:
    """Each block named by its kind and what it shows (``title``, ``target-header``,
    ``fold-dynamo-output-graph``, ``paragraph-by-phase-over-all-compilations``,
    ``table-phase-seconds-share``); a name that repeats gets ``-2``, ``-3``."""
    names: list[str] = []
    seen: Counter[str] = Counter()
    for block in blocks:
        words = re.findall(r"[a-z][a-z0-9]+", _shown(block).lower().replace("'", ""))
        what = "-".join(words[:NAME_WORDS])  # no counts, no units: a name outlives its figures
        name = block.tagname + (f"-{what}" if what else "")
        seen[name] += 1
        names.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return names


def _shown(block: nodes.Node) -> str:
    """What a block shows, in a few words: its anchor, its fold's title, its chart's label,
    its table's column headers, else its text (a title: nothing, the page names it)."""
    if not isinstance(block, nodes.Element) or isinstance(block, nodes.title):
        return ""
    if block.get("ids") or block.get("refid"):
        return str((block.get("ids") or [block["refid"]])[0])
    if block.tagname == "fold" and block.children:
        return block.children[0].astext().split(" (")[0]
    if block.tagname == "chart_node":
        found = re.search(r'aria-label="([^"]*)"', str(block.get("svg", "")))
        return found.group(1) if found else ""
    if isinstance(block, nodes.table):
        head = next(iter(block.findall(nodes.row)), None)
        return " ".join(e.astext() for e in head.findall(nodes.entry)) if head else ""
    return block.astext()


def check_sections(
    shown: str, doctree: nodes.document, srcdir: Path, file_regression: FileRegressionFixture
) -> None:
    """One snapshot a section, in ``test_snapshots/<trace>/<page>/``; every file checked, then
    what differed reported at once, and a file of a section the page no longer has is an
    error."""
    folder = SNAPSHOTS / shown
    folder.mkdir(parents=True, exist_ok=True)
    page = next(c for c in doctree.children if isinstance(c, nodes.section))
    found, failed = set(), []
    for name, text in sections(page):
        found.add(f"{name}.xml")
        try:
            file_regression.check(_normalized(text, srcdir), fullpath=folder / f"{name}.xml")
        except (AssertionError, pytest.fail.Exception) as failure:
            failed.append(f"{name}: {str(failure)[:2000]}")
    stale = sorted(p.name for p in folder.glob("*.xml") if p.name not in found)
    assert not stale, f"snapshots of sections the page no longer has: {stale}"
    assert not failed, "\n\n".join(failed)


@pytest.mark.parametrize("shown", list(PAGES))
def test_page_doctree(
    simple_site: SphinxTestApp, shown: str, file_regression: FileRegressionFixture
) -> None:
    doctree = simple_site.env.get_doctree(PAGES[shown])
    check_sections(shown, doctree, Path(simple_site.srcdir), file_regression)


@pytest.mark.parametrize("shown", list(PAGED))
def test_paged_doctree(
    paged_site: SphinxTestApp, shown: str, file_regression: FileRegressionFixture
) -> None:
    doctree = paged_site.env.get_doctree(PAGED[shown])
    check_sections(shown, doctree, Path(paged_site.srcdir), file_regression)


def test_sections_split_as_documented() -> None:
    """The splitter on a small tree: a short page is one file, a long one a file a section,
    each named by what it shows, never by its position."""
    page = nodes.section(ids=["page"])
    page += nodes.paragraph(text="intro")
    for anchor in ("a", "b"):
        sub = nodes.section(ids=[anchor])
        sub += nodes.paragraph(text=anchor)
        page += sub
    assert [n for n, _ in sections(page)] == ["page"]
    page += nodes.paragraph(text="Intro!")
    page += nodes.paragraph(text="intro")
    page += nodes.literal_block(text="\n".join(["long"] * (SECTION_LINES + 1)))
    split = dict(sections(page))
    assert list(split) == [
        "head.paragraph-intro",
        "head.paragraph-intro-2",
        "head.paragraph-intro-3",
        "head.literal_block-long-long-long-long-long-long",
        "a",
        "b",
    ]
    assert "intro" in split["head.paragraph-intro"] and "<section" not in split["a"][1:]
    page.remove(page[-1])  # the long block moves into a section of its own
    page += nodes.section(ids=["c"])
    page[-1] += nodes.literal_block(text="\n".join(["long"] * (SECTION_LINES + 1)))
    names = [n for n, _ in sections(page)]
    assert names == ["head", "a", "b", "c.literal_block-long-long-long-long-long-long"]


def test_stub_sources(simple_site: SphinxTestApp, file_regression: FileRegressionFixture) -> None:
    """Every generated source: nothing but a comment and the page directive."""
    root = Path(simple_site.srcdir) / "torchtrace"
    stubs = sorted(p for p in root.rglob("*.rst"))
    text = "".join(
        f"== {p.relative_to(root).as_posix()}\n{_normalized(p.read_text('utf-8'), root)}"
        for p in stubs
    )
    file_regression.check(text, fullpath=SNAPSHOTS / "simple" / "stubs.txt")


def test_a_myst_only_project_gets_myst_stubs(make_site: SiteMaker) -> None:
    """A project that reads only ``.md`` gets its trace pages as MyST stubs, and builds them."""
    app = make_site(
        "myst",
        "html",
        confoverrides={"source_suffix": {".md": "markdown"}},
    )
    root = Path(app.srcdir) / "torchtrace"
    assert not list(root.rglob("*.rst"))
    stubs = list(root.rglob("*.md"))
    assert stubs and all("```{torchtrace-page}" in p.read_text("utf-8") for p in stubs)
    assert "toctree contains reference to non-existing document" not in app.warning.getvalue()
    assert (app.outdir / "torchtrace").is_dir()
