"""Snapshots of what users get: the doctrees of one small trace's pages, and their stubs.

A change to a page view, to the blocks-to-nodes layer or to names shows here as a
diff a reviewer can read (``pytest --force-regen`` rewrites the files after a
deliberate change).  The doctrees are Sphinx's own pickled documents, printed with
docutils' ``pformat`` after the build's paths are taken out.  They depend on the
docutils version, so they are pinned in the default test environment only: the
version-matrix sessions skip the ``snapshot`` marker.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
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


@pytest.mark.parametrize("kind", list(PAGES))
def test_page_doctree(
    simple_site: SphinxTestApp, kind: str, file_regression: FileRegressionFixture
) -> None:
    doctree = simple_site.env.get_doctree(PAGES[kind])
    text = _normalized(doctree.pformat(), Path(simple_site.srcdir))
    file_regression.check(text, basename=f"doctree_{kind}", extension=".xml")


@pytest.mark.parametrize("kind", list(PAGED))
def test_paged_doctree(
    paged_site: SphinxTestApp, kind: str, file_regression: FileRegressionFixture
) -> None:
    doctree = paged_site.env.get_doctree(PAGED[kind])
    text = _normalized(doctree.pformat(), Path(paged_site.srcdir))
    file_regression.check(text, basename=f"doctree_{kind}", extension=".xml")


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
