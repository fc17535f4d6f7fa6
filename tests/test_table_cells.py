"""Table cells made without the inline parser are the nodes the parser makes."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

import sphinx_torchtrace.table as table

from .conftest import SiteMaker, generated_pages


def _doctrees(app: SphinxTestApp, pages: list[str]) -> dict[str, str]:
    """Each page's doctree as text, its build folder left out."""
    doctreedir = Path(app.doctreedir)
    return {
        page: pickle.loads((doctreedir / f"{page}.doctree").read_bytes())
        .pformat()
        .replace(str(app.srcdir), "SRC")
        for page in pages
    }


def test_fast_cells_equal_parsed_cells(
    make_site: SiteMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = make_site("multi", "html")
    pages = generated_pages(fast)
    fast_trees = _doctrees(fast, pages)
    monkeypatch.setattr(table, "simple_cell", lambda text: None)
    slow = make_site("multi", "html")
    assert generated_pages(slow) == pages
    slow_trees = _doctrees(slow, pages)
    for page in pages:
        assert fast_trees[page] == slow_trees[page], page


@pytest.mark.parametrize(
    "cell",
    [
        r"a\_b",  # escaped
        r":code:`x`, :code:`y`",
        r"cpp (:code:`cpp_pybinding` backend)",
        r"size 1\.2 KiB",
        r":code:`a\`b`",
        r":code:`a\\b`",
    ],
)
def test_simple_cells_are_taken(cell: str) -> None:
    assert table.simple_cell(cell) is not None


@pytest.mark.parametrize(
    "cell",
    [
        ":doc:`x <y>`",
        "*emphasis*",
        "word_",
        "http://example.com",
        "a@b.org",
        "x:code:`y`",  # docutils would not see a role here
        ":code:` x`",
        r"escaped\ space",
        "|sub|",
        "a\\_b" * 5000 + "`",  # long and failing late: no backtracking blow-up
    ],
)
def test_cells_with_markup_go_to_the_parser(cell: str) -> None:
    assert table.simple_cell(cell) is None
