"""The directives in a user's page (``torchtrace``, ``torchtrace-diff`` ...): a summary
where they stand, and the way into the pages.

The pages are generated before reading starts (:mod:`.generate`); a directive only
finds what it stands for in this build's registry (:mod:`.built`), says the notes of
its input (warnings at its own line) and shows the input's summary, built from
blocks (:mod:`.doctree`) so it renders the same in rST and MyST pages.  Each family
(:mod:`.families`) makes its directive class with :func:`input_directive`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, cast

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from .built import Problem, built, key
from .doctree import mark_output
from .options import AnyOption
from .warnings import OPTION, diagnostic, warn


class InputDirective(SphinxDirective):
    """A directive whose argument names an input (each path relative to the page)."""

    directive_name: ClassVar[str]
    #: the family's parser of its options (ValueError names the bad one)
    parse_options: ClassVar[Callable[[Mapping[str, str | None]], Any]]
    required_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list[nodes.Node]:
        location = self.get_location()
        try:
            type(self).parse_options(self.options)
        except ValueError as err:
            warn(OPTION, str(err), location)
            return []
        registry = built(self.env)
        name = self.options.get("name") or ""
        # the scan counts directives of the same argument and name on a page in this order
        seen = cast(
            dict[tuple[str, str, str], int],  # this page's: reset as each is read
            self.env.temp_data.setdefault("torchtrace_directives_seen", {}),
        )
        same = (self.directive_name, " ".join(self.arguments[0].split()), " ".join(name.split()))
        nth = seen[same] = seen.get(same, -1) + 1
        found = key(self.env.docname, self.directive_name, self.arguments[0], name, nth)
        generated = registry.directives.get(found)
        if generated is None:
            problem = registry.problems.get(
                found,
                Problem(f"no report was generated for {self.arguments[0]!r}", diagnostic("read")),
            )
            for log in problem.logs:
                self.env.note_dependency(str(log))
            warn(problem.subtype, problem.message, location)
            return []
        for subtype, message in generated.notes:  # read again by content: see .built
            warn(subtype, message, location)
        return mark_output(generated.inline_nodes(self))


def input_directive(
    name: str,
    description: str,
    spec: Mapping[str, Callable[[str | None], Any]],
    parse: Callable[[Mapping[str, str | None]], Any],
) -> type[InputDirective]:
    """The directive class of a family: every option key taken as raw text (so that
    ``parse`` can say what a misspelled option should have been), checked by ``parse``."""
    words = "".join(part.capitalize() for part in name.replace("-", " ").split())
    return type(
        f"{words}Directive",
        (InputDirective,),
        {
            "__doc__": f"``.. {name}::``: {description}",
            "__module__": __name__,
            "directive_name": name,
            "option_spec": AnyOption(dict.fromkeys(spec, directives.unchanged)),
            "parse_options": staticmethod(parse),
        },
    )
