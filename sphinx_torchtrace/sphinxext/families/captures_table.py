"""``.. torchtrace-captures::``: every capture of this build, as myst-nb's ``nb-exec-table``
lists executed notebooks: page, script, run or cached, duration, how it ended.

The capture family's companion directive and finishing step (:mod:`.capture` declares
both): the rows are made at ``builder-inited``, kept in the build's registry as the
family's part (:class:`Captures`); a page holding the table is read again when they
change (:func:`note_tables`), not on every build.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from ...site import blocks as b
from ..built import built
from ..doctree import DoctreeBuilder, mark_output
from .base import Context

DIRECTIVE = "torchtrace-captures"
_USE = re.compile(r"(?:\.\.[ \t]+torchtrace-captures::|\{torchtrace-captures\})")


@dataclass(frozen=True)
class CaptureRow:
    """One ``torchtrace-capture`` of this build, for the ``torchtrace-captures`` table."""

    docname: str
    script: str  # as the directive names it
    outcome: str  # "ran", "cached", "skipped" (no torch), "missing" (never mode, no match)
    duration: float | None  # seconds the capture took (when it ran, in this build or before)
    status: str  # "ok", "failed (exit status 1)", "timed out after 5 s", or why not run


@dataclass
class Captures:
    """The capture family's part of a build's registry (:meth:`..built.Built.part`)."""

    rows: list[CaptureRow] = field(default_factory=list)  # in the order they were made


class CapturesTable(SphinxDirective):
    """The table of this build's ``torchtrace-capture`` directives."""

    def run(self) -> list[nodes.Node]:
        rows: list[list[b.Inlines]] = []
        for row in built(self.env).part(Captures).rows:
            duration = "-" if row.duration is None else f"{row.duration:.1f} s"
            rows.append(
                [
                    [b.PageLink(row.docname, row.docname)],
                    [b.Code(row.script)],
                    [row.outcome],
                    [duration],
                    [row.status],
                ]
            )
        if not rows:
            blocks: list[b.Block] = [b.Paragraph(["No torchtrace-capture in this build."])]
        else:
            blocks = [
                b.Table(
                    ["Page", "Script", "Capture", "Duration", "Status"],
                    rows,
                    widths=[2, 2, 1, 1, 3],
                    classes=["torchtrace-captures"],
                )
            ]
        builder = DoctreeBuilder(self.env, self.state.document, lambda s: s)
        return mark_output(builder.blocks(blocks))


def note_tables(context: Context) -> None:
    """The family's finishing step: pages holding the table depend on its rows, so their
    digest is the rows'."""
    registry = context.built
    captures = registry.part(Captures).rows
    if not captures:
        return
    rows = json.dumps([(r.docname, r.script, r.outcome, r.duration, r.status) for r in captures])
    digest = hashlib.sha256(rows.encode()).hexdigest()
    env = context.app.env
    prefix = context.gen_dir.rstrip("/") + "/"
    for docname in sorted(env.found_docs):
        if docname.startswith(prefix):
            continue
        try:
            text = Path(env.doc2path(docname)).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _USE.search(text):
            before = registry.digests.get(docname, "")
            registry.digests[docname] = hashlib.sha256((before + digest).encode()).hexdigest()
