"""The ``torchtrace`` directive: a trace's overview, rendered where the directive stands.

Thin on purpose: the model (:mod:`sphinx_torchtrace.trace`) computes everything;
this module turns it into docutils nodes and trace diagnostics into typed
Sphinx warnings (``torchtrace.<kind>``) that point at the log's file and line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from .trace import Compile, Trace, TraceReadError, load_trace, resolve_logs

logger = logging.getLogger(__name__)

STATUS_CLASS = "torchtrace-status-{}"


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
    }

    def run(self) -> list[nodes.Node]:
        rel, path = self.env.relfn2path(self.arguments[0], self.env.docname)
        latest = "latest" in self.options
        ranks_opt = self.options.get("ranks", "all")
        ranks = None if ranks_opt in ("", "all") else [int(r) for r in ranks_opt.split(",")]
        try:
            logs = resolve_logs(path, latest=latest, ranks=ranks)
            for log in logs:
                self.env.note_dependency(os.fspath(log))
            trace = load_trace(
                path,
                latest=latest,
                ranks=ranks,
                display_root=self.env.srcdir,
                cache_dir=os.path.join(self.env.doctreedir, "torchtrace-cache"),
            )
        except TraceReadError as e:
            logger.warning(str(e), location=self.get_location(), type="torchtrace", subtype="read")
            return []
        for d in trace.diagnostics:
            logger.warning(
                d.message, location=f"{d.path}:{d.line}" if d.line else d.path,
                type="torchtrace", subtype=d.kind,
            )
        label = self.options.get("name") or Path(rel).stem
        return [self._overview(trace, label)]

    def _overview(self, trace: Trace, label: str) -> nodes.Element:
        container = nodes.container(classes=["torchtrace-overview"])
        version = next((r.torch_version for r in trace.ranks if r.torch_version), None)
        facts = [f"Trace {label}"]
        if version:
            facts.append(f"PyTorch {version.get('pytorch_version')}")
        facts.append(f"{len(trace.ranks)} rank(s)")
        container += nodes.paragraph(text=" · ".join(facts))
        for rank in trace.ranks:
            if trace.is_multi_rank:
                container += nodes.rubric(text=f"Rank {rank.rank}")
            container += self._compile_table(rank.compiles)
        return container

    def _compile_table(self, compiles: list[Compile]) -> nodes.table:
        headers = ["Compile id", "Status", "Artifacts", "Graphs", "Kernels", "Failures"]
        table = nodes.table(classes=["torchtrace-compiles"])
        group = nodes.tgroup(cols=len(headers))
        table += group
        for _ in headers:
            group += nodes.colspec(colwidth=1)
        head = nodes.thead()
        group += head
        head += _row([nodes.Text(h) for h in headers])
        body = nodes.tbody()
        group += body
        for c in compiles:
            badge = nodes.inline(text=c.label, classes=["torchtrace-badge",
                                                       STATUS_CLASS.format(c.status)])
            body += _row([
                badge,
                nodes.Text(c.status),
                nodes.Text(str(len(c.artifacts))),
                nodes.Text(str(len(c.graphs))),
                nodes.Text(str(sum(len(a.kernels) for a in c.artifacts))),
                nodes.Text(str(len(c.failures))),
            ])
        return table


def _row(cells: list[nodes.Node]) -> nodes.row:
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        para = nodes.paragraph()
        para += cell
        entry += para
        row += entry
    return row


def setup_directive(app: Sphinx) -> None:
    app.add_directive("torchtrace", TorchTraceDirective)
    static = Path(__file__).parent / "static"
    app.connect("builder-inited", lambda a: a.config.html_static_path.append(str(static)))
    app.add_css_file("torchtrace.css")
