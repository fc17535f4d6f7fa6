"""A directive family is one module and one line.

The family below (``torchtrace-count``: how many records a log holds) is declared in
this module alone and added to :data:`families.FAMILIES` as a project would add its
line: a real Sphinx build then registers its directive, checks its options and its
configuration value, keeps its input out of document discovery, generates it and
shows its options table.  Nothing else of the extension names it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from sphinx_torchtrace.site.blocks import Page
from sphinx_torchtrace.sphinxext import families
from sphinx_torchtrace.sphinxext.config import setting, settings_of
from sphinx_torchtrace.sphinxext.families.base import Context
from sphinx_torchtrace.sphinxext.families.family import Family, Options
from sphinx_torchtrace.sphinxext.options import checked_options, name_option
from sphinx_torchtrace.sphinxext.scan import DirectiveRequest
from sphinx_torchtrace.trace import load_trace

from .conftest import DATA, SiteMaker, copy_testroot, warnings_of

NAME = "torchtrace-count"
SPEC = {"name": name_option}


def _positive(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError("must be a whole number above 0")
    return value


@dataclass(frozen=True)
class CountSettings:
    count_at_most: int = setting(1_000_000, _positive)


@dataclass
class Counted:
    """The toy's :class:`~sphinx_torchtrace.sphinxext.built.Generated`: no pages."""

    records: int
    logs: list[Path]
    notes: list[tuple[str, str]] = field(default_factory=list)

    @property
    def rewrite(self) -> Callable[[str], str]:
        return str

    def page(self, docname: str) -> Page:
        raise KeyError(docname)

    def page_nodes(self, directive: SphinxDirective, docname: str) -> list[nodes.Node]:
        raise KeyError(docname)

    def meanings(self) -> dict[str, str]:
        return {}

    def inline_nodes(self, directive: SphinxDirective) -> list[nodes.Node]:
        limit = settings_of(directive.config, CountSettings).count_at_most
        return [nodes.paragraph(text=f"Counted: {min(self.records, limit)} records")]


class CountHandler:
    def accepts(self, path: str, options: object) -> bool:
        return True

    def generate(
        self, context: Context, request: DirectiveRequest, options: object
    ) -> list[DirectiveRequest]:
        trace = load_trace(request.path)
        records = sum(sum(rank.stats.values()) for rank in trace.ranks)
        context.register(request, NAME, Counted(records, [Path(request.path)]))
        return []


def _parse(raw: Mapping[str, str | None]) -> dict[str, Any]:
    return checked_options(raw, SPEC)


TOY = Family(
    name=NAME,
    description="how many records a log holds",
    options=Options(SPEC, _parse, ("a trace log",), {"name": {"a trace log": "its label"}}),
    handlers=(CountHandler(),),
    input_paths=lambda argument, raw: [argument],
    settings=(CountSettings,),
)


@pytest.fixture
def with_toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(families, "FAMILIES", (*families.FAMILIES, TOY))


def test_a_new_family_is_one_module_and_one_line(
    with_toy: None, make_site: SiteMaker, tmp_path: Path
) -> None:
    log = DATA / "shared" / "simple" / "dedicated_log_torch_trace_5aek85xk.log"
    records = sum(sum(r.stats.values()) for r in load_trace(log).ranks)
    page = (
        "Toy\n===\n\n"
        f".. {NAME}:: run\n\n"
        f".. {NAME}:: run\n   :nmae: typo\n\n"
        f".. torchtrace-options:: {NAME}\n"
    )
    srcdir = copy_testroot("simple", tmp_path / "toy")
    run = srcdir / "run"  # a folder of logs, with a page someone left in it
    run.mkdir()
    (run / log.name).write_bytes(log.read_bytes())
    (run / "notes.rst").write_text("Not a page\n==========\n", encoding="utf-8")
    app = make_site(
        "simple",
        "html",
        srcdir=srcdir,
        pages={"toy.rst": page},
        confoverrides={"torchtrace_count_at_most": 0},
    )
    html = (Path(app.outdir) / "toy.html").read_text(encoding="utf-8")
    warnings = warnings_of(app)
    # its configuration value is checked like the extension's own: warned, default used
    assert "torchtrace_count_at_most = 0 must be a whole number above 0" in warnings
    assert f"Counted: {records} records" in html
    assert "unknown option :nmae:; valid: name" in warnings  # its own spec, at its line
    assert "toy.rst:" in warnings.split("unknown option :nmae:")[0].splitlines()[-1]
    assert "its label" in html and "<th" in html  # the options table, from its rows
    assert not (Path(app.outdir) / "run" / "notes.html").exists()  # its input kept out
    assert "notes" not in warnings
