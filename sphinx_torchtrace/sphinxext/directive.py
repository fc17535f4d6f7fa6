"""The directives in a user's page, ``torchtrace`` and ``torchtrace-diff``: a summary
where they stand, and the way into the pages.

The pages are generated before reading starts (:mod:`.generate`); a directive only
finds what it stands for in this build's registry (:mod:`.built`), says the notes of
its input (warnings at its own line) and shows the input's summary, built from
blocks (:mod:`.doctree`) so it renders the same in rST and MyST pages.  The kind of
input (:mod:`.kinds`) decides what the summary is.
"""

from __future__ import annotations

from typing import Any, ClassVar, cast

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from .built import Problem, built, key
from .doctree import mark_output
from .options import (
    CAPTURE_OPTION_SPEC,
    DIFF_OPTION_SPEC,
    OPTION_SPEC,
    TREND_OPTION_SPEC,
    AnyOption,
    parse_capture_options,
    parse_diff_options,
    parse_options,
    parse_trend_options,
)
from .warnings import warn


class InputDirective(SphinxDirective):
    """A directive whose argument names an input (each path relative to the page)."""

    directive_name: ClassVar[str]
    required_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list[nodes.Node]:
        location = self.get_location()
        try:
            self.check_options()
        except ValueError as err:
            warn("option", str(err), location)
            return []
        registry = built(self.env)
        name = self.options.get("name") or ""
        # the scan counts directives of the same argument and name on a page in this order
        seen = cast(dict[tuple[str, str, str], int],  # this page's: reset as each is read
                    self.env.temp_data.setdefault("torchtrace_directives_seen", {}))
        same = (self.directive_name, " ".join(self.arguments[0].split()), " ".join(name.split()))
        nth = seen[same] = seen.get(same, -1) + 1
        found = key(self.env.docname, self.directive_name, self.arguments[0], name, nth)
        generated = registry.directives.get(found)
        if generated is None:
            problem = registry.problems.get(
                found, Problem(f"no report was generated for {self.arguments[0]!r}", "read")
            )
            for log in problem.logs:
                self.env.note_dependency(str(log))
            warn(problem.subtype, problem.message, location)
            return []
        for subtype, message in generated.notes:  # read again by content: see .built
            warn(subtype, message, location)
        return mark_output(generated.summary_nodes(self))

    def check_options(self) -> None:
        """ValueError naming an option the directive does not accept."""
        raise NotImplementedError


class TorchTraceDirective(InputDirective):
    """``.. torchtrace:: path/to/log-or-dir``: a trace, a debug folder or a text log."""

    directive_name = "torchtrace"
    # Raw text for every key: checked by parse_options, as the scan checks them.
    option_spec: ClassVar[dict[str, Any]] = AnyOption(
        dict.fromkeys(OPTION_SPEC, directives.unchanged)
    )

    def check_options(self) -> None:
        parse_options(self.options)


class TorchTraceDiffDirective(InputDirective):
    """``.. torchtrace-diff:: baseline-path new-path``: two runs compared."""

    directive_name = "torchtrace-diff"
    option_spec: ClassVar[dict[str, Any]] = AnyOption(
        dict.fromkeys(DIFF_OPTION_SPEC, directives.unchanged)
    )

    def check_options(self) -> None:
        parse_diff_options(self.options)


class TorchTraceTrendDirective(InputDirective):
    """``.. torchtrace-trend:: run1 run2 run3``: each function over several runs."""

    directive_name = "torchtrace-trend"
    option_spec: ClassVar[dict[str, Any]] = AnyOption(
        dict.fromkeys(TREND_OPTION_SPEC, directives.unchanged)
    )

    def check_options(self) -> None:
        parse_trend_options(self.options)


class TorchTraceCaptureDirective(InputDirective):
    """``.. torchtrace-capture:: scripts/train.py``: the report of a script run at build
    time (or found in the captures' cache)."""

    directive_name = "torchtrace-capture"
    option_spec: ClassVar[dict[str, Any]] = AnyOption(
        dict.fromkeys(CAPTURE_OPTION_SPEC, directives.unchanged)
    )

    def check_options(self) -> None:
        parse_capture_options(self.options)
