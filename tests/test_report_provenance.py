"""A published report says what made it: the PyTorch build and commit, each log's file,
size and sha256, the extension's version and the day the pages were made (an open
tlparse request), for every kind of input and on a real Sphinx build."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from sphinx_torchtrace.site.blocks import Code, Dropdown, Table, inline_text
from sphinx_torchtrace.site.pages.overview import overview_page
from sphinx_torchtrace.site.plan import PageSettings, plan_trace
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.inputs.text_log import load_text_log
from sphinx_torchtrace.version import __version__

from .conftest import DATA, SIMPLE_LOG, SiteMaker, warnings_of

RANKS = DATA / "corpus" / "ddp_4ranks"
TEXT_LOG = DATA / "captured" / "torch_logs" / "plus_dynamo.log"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _header(page: object) -> dict[str, str]:
    """The overview's header table as {row title: what it says}."""
    for block in page.blocks:  # type: ignore[attr-defined]
        if isinstance(block, Table) and block.rows and inline_text(block.rows[0][0]) == "PyTorch":
            return {inline_text(r[0]): inline_text(r[1]) for r in block.rows}
    raise AssertionError("no header table")


@pytest.mark.parametrize("cached", [False, True])
def test_the_header_names_the_torch_build_the_file_and_what_made_the_page(
    tmp_path: Path, cached: bool
) -> None:
    trace = load_trace(SIMPLE_LOG, cache_dir=tmp_path if cached else None)
    if cached:  # the second read comes from the model cache: the same figures
        trace = load_trace(SIMPLE_LOG, cache_dir=tmp_path)
    plan = plan_trace("t", trace, "torchtrace")
    header = _header(overview_page(plan, PageSettings(made_on="2026-11-26")))
    assert header["PyTorch"] == "2.13.0+cpu (commit cf30153c4c131c8164ee7798e5022d810682e2cb)"
    assert header["Log"].endswith(f"(389.3 KiB), sha256 {_sha256(SIMPLE_LOG)}")
    assert header["Report"] == f"made by sphinx-torchtrace {__version__}, 2026-11-26 (UTC)"


def test_every_rank_file_is_listed_with_its_sha256() -> None:
    plan = plan_trace("t", load_trace(RANKS), "torchtrace")
    page = overview_page(plan, PageSettings())
    header = _header(page)
    assert header["Log"].startswith("4 files, ")
    assert header["Report"] == f"made by sphinx-torchtrace {__version__}"  # no day: not said
    (files,) = [
        b
        for b in page.blocks
        if isinstance(b, Dropdown) and inline_text(b.title) == "The 4 log files"
    ]
    (table,) = files.blocks
    assert isinstance(table, Table)
    by_rank = {inline_text(r[0]): r[3][0] for r in table.rows}
    for log in sorted(RANKS.glob("*.log.gz")):
        rank = re.search(r"rank_(\d+)", log.name).group(1)  # type: ignore[union-attr]
        assert by_rank[rank] == Code(_sha256(log))


def test_a_text_log_names_its_sha256_too() -> None:
    trace = load_text_log(TEXT_LOG)
    assert {r.sha256 for r in trace.ranks} == {_sha256(TEXT_LOG)}


def test_a_build_says_the_day_sphinx_would(
    make_site: SiteMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``SOURCE_DATE_EPOCH`` (reproducible builds) is honoured, as Sphinx does for |today|."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795629546")  # 2026-11-25, UTC
    app = make_site("simple")
    assert "WARNING" not in warnings_of(app)
    text = (Path(app.outdir) / "torchtrace/simple/index.html").read_text("utf-8")
    said = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text))
    assert f"made by sphinx-torchtrace {__version__}, 2026-11-25 (UTC)" in said
    assert _sha256(SIMPLE_LOG) in said
