"""``.. torchtrace-warnings::``: the documentation's table of warnings, from the reader's,
the extension's and every family's subtypes (:func:`.families.warning_types`)."""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from ..site import blocks as b
from .doctree import DoctreeBuilder
from .families import warning_types


class WarningsTable(SphinxDirective):
    """Every ``torchtrace.*`` warning subtype and what it means (see :mod:`.warnings`)."""

    def run(self) -> list[nodes.Node]:
        rows: list[list[b.Inlines]] = [
            [[b.Code(f"torchtrace.{w.name}")], [w.meaning]] for w in warning_types()
        ]
        table = b.Table(["Type", "Meaning"], rows, widths=[1, 3])
        return DoctreeBuilder(self.env, self.state.document, lambda s: s).blocks([table])
