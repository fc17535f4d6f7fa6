"""Snapshots of what users get: the doctrees of one small trace's pages, a file per
section (``test_snapshots/<page>/``), and their stubs.

A change to a page view, to the blocks-to-nodes layer or to names shows here as a
diff a reviewer can read (``pytest --force-regen`` rewrites the files after a
deliberate change).  The doctrees are Sphinx's own pickled documents, printed with
docutils' ``pformat`` after the build's paths are taken out.  They depend on the
docutils version, so they are pinned in the default test environment only: the
version-matrix sessions skip the ``snapshot`` marker.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from docutils import nodes
from pytest_regressions.file_regression import FileRegressionFixture
from sphinx.testing.util import SphinxTestApp

from .conftest import SiteMaker

pytestmark = pytest.mark.snapshot

#: The pages of the default site (small graphs and their kernels folded on the frame page),
#: and the graph and kernel pages of the same trace with every graph on a page of its own
#: (what a graph too large to fold gets).
PAGES = {
    "overview": "torchtrace/simple/index",
    "frame": "torchtrace/simple/frame-0-0",
}
PAGED = {
    "graph": "torchtrace/simple/frame-0-0/graph-dynamo-output-graph",
    "kernel": "torchtrace/simple/frame-0-0/kernel-cpp-fused-relu-0",
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


def sections(node: nodes.Element, name: str) -> Iterator[tuple[str, str]]:
    """(file name, pformat) of a page's parts: what comes before its first section (a
    file a block where that is long), then each section by its anchor, a long one split
    the same way."""
    subsections = [c for c in node.children if isinstance(c, nodes.section)]
    text = node.pformat()
    if text.count("\n") <= SECTION_LINES:
        yield name, text
        return
    head = node.copy()  # the node itself, with what is not a section
    head.extend(c.deepcopy() for c in node.children if not isinstance(c, nodes.section))
    if head.pformat().count("\n") <= SECTION_LINES:
        yield f"{name}.head", head.pformat()
    else:  # a long run of blocks (folds of graphs): a file a block, in page order
        for i, child in enumerate(head.children):
            yield f"{name}.{i:02d}-{child.tagname}", child.pformat()
    for child in subsections:
        yield from sections(child, f"{name}.{child['ids'][0]}")


def check_sections(
    kind: str, doctree: nodes.document, srcdir: Path, file_regression: FileRegressionFixture
) -> None:
    """One snapshot a section, in ``test_snapshots/<kind>/``; every file checked, then what
    differed reported at once, and a file of a section the page no longer has is an error."""
    folder = SNAPSHOTS / kind
    folder.mkdir(exist_ok=True)
    page = next(c for c in doctree.children if isinstance(c, nodes.section))
    found, failed = set(), []
    for name, text in sections(page, "page"):
        found.add(f"{name}.xml")
        try:
            file_regression.check(_normalized(text, srcdir), fullpath=folder / f"{name}.xml")
        except (AssertionError, pytest.fail.Exception) as failure:
            failed.append(f"{name}: {str(failure)[:2000]}")
    stale = sorted(p.name for p in folder.glob("*.xml") if p.name not in found)
    assert not stale, f"snapshots of sections the page no longer has: {stale}"
    assert not failed, "\n\n".join(failed)


@pytest.mark.parametrize("kind", list(PAGES))
def test_page_doctree(
    simple_site: SphinxTestApp, kind: str, file_regression: FileRegressionFixture
) -> None:
    doctree = simple_site.env.get_doctree(PAGES[kind])
    check_sections(kind, doctree, Path(simple_site.srcdir), file_regression)


@pytest.mark.parametrize("kind", list(PAGED))
def test_paged_doctree(
    paged_site: SphinxTestApp, kind: str, file_regression: FileRegressionFixture
) -> None:
    doctree = paged_site.env.get_doctree(PAGED[kind])
    check_sections(kind, doctree, Path(paged_site.srcdir), file_regression)


def test_sections_split_as_documented() -> None:
    """The splitter on a small tree: a short page is one file, a long one a file a section."""
    page = nodes.section(ids=["page"])
    page += nodes.paragraph(text="intro")
    for anchor in ("a", "b"):
        sub = nodes.section(ids=[anchor])
        sub += nodes.paragraph(text=anchor)
        page += sub
    assert [n for n, _ in sections(page, "page")] == ["page"]
    page += nodes.literal_block(text="\n".join(["x"] * (SECTION_LINES + 1)))
    split = dict(sections(page, "page"))
    assert list(split) == ["page.00-paragraph", "page.01-literal_block", "page.a", "page.b"]
    assert "intro" in split["page.00-paragraph"] and "<section" not in split["page.a"][1:]
    page.remove(page[-1])  # the long block moves into a section of its own
    page += nodes.section(ids=["c"])
    page[-1] += nodes.literal_block(text="\n".join(["x"] * (SECTION_LINES + 1)))
    names = [n for n, _ in sections(page, "page")]
    assert names == ["page.head", "page.a", "page.b", "page.c.00-literal_block"]


def test_stub_sources(simple_site: SphinxTestApp, file_regression: FileRegressionFixture) -> None:
    """Every generated source: nothing but a comment and the page directive."""
    root = Path(simple_site.srcdir) / "torchtrace"
    stubs = sorted(p for p in root.rglob("*.rst"))
    text = "".join(
        f"== {p.relative_to(root).as_posix()}\n{_normalized(p.read_text('utf-8'), root)}"
        for p in stubs
    )
    file_regression.check(text, basename="stubs", extension=".txt")


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
