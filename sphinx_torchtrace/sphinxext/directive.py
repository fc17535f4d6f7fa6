"""The ``torchtrace`` directive in a user's page: a summary and the way into the report.

The pages themselves are generated before reading starts (:mod:`.generate`);
the directive only finds its trace there and links to it, built from plain
nodes so it renders the same in rST and MyST pages.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from .generate import problems, registry, resolve_logs_safely
from .trace import STATUS_LEGEND

logger = logging.getLogger(__name__)


def _ranks(value: str | None) -> str:
    text = (value or "").strip()
    if text != "all" and not all(p.strip().isdigit() for p in text.split(",")):
        raise ValueError("expected 'all' or a comma-separated list of rank numbers")
    return text


class TorchTraceDirective(SphinxDirective):
    """``.. torchtrace:: path/to/log-or-dir`` (relative to the page, like literalinclude)."""

    required_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = {
        "name": directives.unchanged,
        "latest": directives.flag,
        "ranks": _ranks,
        "sections": directives.unchanged,
        "no-source": directives.flag,
    }

    def run(self) -> list[nodes.Node]:
        argument = self.arguments[0]
        generated = registry(self.env).get((self.env.docname, argument))
        _, path = self.env.relfn2path(argument, self.env.docname)
        for log in resolve_logs_safely(path):
            self.env.note_dependency(os.fspath(log))
        if generated is None:
            message, subtype = problems(self.env).get(
                (self.env.docname, argument),
                (f"no report was generated for {argument!r}", "read"),
            )
            logger.warning(
                message, location=self.get_location(), type="torchtrace", subtype=subtype
            )
            return []
        plan = generated.plan
        compiles = [f.compile for f in plan.frames]
        counts: Counter[str] = Counter(c.status for c in compiles)
        para = nodes.paragraph()
        para += nodes.Text(f"Trace {plan.label}: {len(compiles)} compilations (")
        para += nodes.Text(", ".join(f"{counts[s]} {s}" for s in STATUS_LEGEND if counts[s]))
        para += nodes.Text(").")
        toctree = addnodes.toctree()
        toctree["parent"] = self.env.docname
        toctree["entries"] = [(None, plan.index_docname)]
        toctree["includefiles"] = [plan.index_docname]
        toctree["maxdepth"] = 1
        toctree["caption"] = None
        toctree["glob"] = False
        toctree["hidden"] = False
        toctree["includehidden"] = False
        toctree["numbered"] = 0
        toctree["titlesonly"] = False
        wrapper = nodes.compound(classes=["toctree-wrapper", "torchtrace-summary"])
        wrapper += toctree
        return [para, wrapper]
