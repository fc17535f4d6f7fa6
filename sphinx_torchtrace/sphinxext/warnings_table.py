"""``.. torchtrace-warnings::``: the documentation's table of warnings, from the registry."""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from ..site import blocks as b
from .doctree import DoctreeBuilder
from .warnings import WARNINGS


class WarningsTable(SphinxDirective):
    """Every ``torchtrace.*`` warning subtype and what it means (see :mod:`.warnings`)."""

    def run(self) -> list[nodes.Node]:
        rows: list[list[b.Inlines]] = [
            [[b.Code(f"torchtrace.{k}")], [meaning]] for k, meaning in WARNINGS.items()
        ]
        table = b.Table(["Type", "Meaning"], rows, widths=[1, 3])
        return DoctreeBuilder(self.env, self.state.document, lambda s: s).blocks([table])
