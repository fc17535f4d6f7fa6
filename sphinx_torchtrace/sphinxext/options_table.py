"""``.. torchtrace-options::``: the documentation's table of what each option of a directive
family does on each kind of input, made from the family's ``options.effects`` (the tests
check every cell)."""

from __future__ import annotations

from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from ..site import blocks as b
from . import families
from .doctree import DoctreeBuilder


class OptionsTable(SphinxDirective):
    """``.. torchtrace-options::`` (``torchtrace``'s options), ``.. torchtrace-options::
    torchtrace-diff`` (a family's; ``:diff:`` is ``torchtrace-diff``)."""

    optional_arguments = 1
    option_spec: ClassVar[dict[str, Any]] = {"diff": directives.flag}

    def run(self) -> list[nodes.Node]:
        name = (
            self.arguments[0]
            if self.arguments
            else ("torchtrace-diff" if "diff" in self.options else "torchtrace")
        )
        family = next((f for f in families.FAMILIES if f.name == name), None)
        if family is None:
            raise self.error(
                f"no directive family {name!r}; one of "
                f"{', '.join(f.name for f in families.FAMILIES)}"
            )
        effects, kinds = family.options.effects, family.options.input_formats
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
