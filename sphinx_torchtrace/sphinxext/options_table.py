"""``.. torchtrace-options::``: the documentation's table of what each option does on each
input kind, made from :data:`.options.OPTION_EFFECTS` (the tests check every cell)."""

from __future__ import annotations

from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from ..site import blocks as b
from .doctree import DoctreeBuilder
from .options import DIFF_KINDS, DIFF_OPTION_EFFECTS, OPTION_EFFECTS, OPTION_KINDS


class OptionsTable(SphinxDirective):
    """``.. torchtrace-options::`` (``:diff:`` for ``torchtrace-diff``'s options)."""

    option_spec: ClassVar[dict[str, Any]] = {"diff": directives.flag}

    def run(self) -> list[nodes.Node]:
        diff = "diff" in self.options
        effects, kinds = (DIFF_OPTION_EFFECTS, DIFF_KINDS) if diff else (
            OPTION_EFFECTS, OPTION_KINDS)
        rows: list[list[b.Inlines]] = [
            [[b.Code(f":{option}:")], *(_cell(by_kind[k]) for k in kinds)]
            for option, by_kind in effects.items()
        ]
        table = b.Table(["Option", *(k.removeprefix("a ") for k in kinds)], rows)
        return DoctreeBuilder(self.env, self.state.document, lambda s: s).blocks([table])


def _cell(text: str) -> b.Inlines:
    """``literal`` parts of the registry's text as code, the rest as text (no markup parsed)."""
    out: list[b.Inline] = []
    for i, part in enumerate(text.split("``")):
        if part:
            out.append(b.Code(part) if i % 2 else part)
    return out
