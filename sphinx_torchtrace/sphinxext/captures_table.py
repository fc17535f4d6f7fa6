"""``.. torchtrace-captures::``: every capture of this build, as myst-nb's ``nb-exec-table``
lists executed notebooks: page, script, run or cached, duration, how it ended.

The rows are made at ``builder-inited`` (:mod:`.families.capture`); a page holding the
table is read again when they change (:func:`note_tables`), not on every build.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from ..site import blocks as b
from .built import Built, built
from .doctree import DoctreeBuilder, mark_output

DIRECTIVE = "torchtrace-captures"
_USE = re.compile(r"(?:\.\.[ \t]+torchtrace-captures::|\{torchtrace-captures\})")


class CapturesTable(SphinxDirective):
    """The table of this build's ``torchtrace-capture`` directives."""

    def run(self) -> list[nodes.Node]:
        rows: list[list[b.Inlines]] = []
        for row in built(self.env).captures:
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


def note_tables(app: Sphinx, registry: Built, generated: str) -> None:
    """Pages holding the table depend on its rows: their digest is the rows'."""
    if not registry.captures:
        return
    rows = json.dumps(
        [(r.docname, r.script, r.outcome, r.duration, r.status) for r in registry.captures]
    )
    digest = hashlib.sha256(rows.encode()).hexdigest()
    env = app.env
    prefix = generated.rstrip("/") + "/"
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
