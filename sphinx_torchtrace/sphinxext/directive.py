"""The ``torchtrace`` directive in a user's page: a summary and the way into the report.

The pages themselves are generated before reading starts (:mod:`.generate`);
the directive only finds its trace there and links to it, built from blocks
(:mod:`.doctree`) so it renders the same in rST and MyST pages.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from ..site import blocks as b
from ..site.pages.overview import triage_blocks
from ..trace import STATUS_LEGEND
from ..trace.inputs import detect_kind
from .debug_dir import debug_summary_nodes
from .doctree import DoctreeBuilder, mark_output
from .generate import problems, registry, resolve_logs_safely
from .options import OPTION_SPEC, AnyOption, ineffective_options, option_kind, parse_options
from .warnings import warn


class TorchTraceDirective(SphinxDirective):
    """``.. torchtrace:: path/to/log-or-dir`` (relative to the page, like literalinclude)."""

    required_arguments = 1
    final_argument_whitespace = True
    # Raw text for every key: checked by parse_options, as the scan checks them.
    option_spec: ClassVar[dict[str, Any]] = AnyOption(
        dict.fromkeys(OPTION_SPEC, directives.unchanged)
    )

    def run(self) -> list[nodes.Node]:
        argument = self.arguments[0]
        try:
            options = parse_options(self.options)
        except ValueError as err:
            warn("option", str(err), self.get_location())
            return []
        generated = registry(self.env).get((self.env.docname, argument))
        _, path = self.env.relfn2path(argument, self.env.docname)
        if os.path.exists(path):
            kind = option_kind(options.format or detect_kind(path), os.path.isdir(path))
            for option in ineffective_options(options, kind):
                warn("option", f":{option}: has no effect on {kind}; it is ignored",
                     self.get_location())
        logs = generated.logs if generated is not None else resolve_logs_safely(
            path, options.latest, options.ranks)
        for log in logs:
            self.env.note_dependency(os.fspath(log))
        if generated is None:
            debug_nodes = debug_summary_nodes(self, argument)  # a TORCH_COMPILE_DEBUG folder
            if debug_nodes is not None:
                return debug_nodes
            message, subtype = problems(self.env).get(
                (self.env.docname, argument),
                (f"no report was generated for {argument!r}", "read"),
            )
            warn(subtype, message, self.get_location())
            return []
        for subtype, message in generated.notes:
            warn(subtype, message, self.get_location())
        plan = generated.plan
        compiles = [c for r in plan.trace.ranks for c in r.compiles]  # past the frame cap too
        counts: Counter[str] = Counter(c.status for c in compiles)
        statuses = ", ".join(f"{counts[s]} {s}" for s in STATUS_LEGEND if counts[s])
        summary = b.Paragraph(
            ["Trace ", plan.label, f": {len(compiles)} compilations ({statuses})."]
        )
        builder = DoctreeBuilder(self.env, self.state.document, generated.rewrite)
        glance = triage_blocks(plan, generated.settings, titled=False)  # the answer first
        out = builder.blocks([summary, *glance, b.Toctree([plan.index_docname])])
        wrapper = out[-1]
        assert isinstance(wrapper, nodes.Element)
        wrapper["classes"].append("torchtrace-summary")
        return mark_output(out)
