"""The cache lookups of the compile, one row each."""

from __future__ import annotations

from ...blocks import Code, Inlines, Section, Table
from ...words import _
from .view import FrameView


def section(view: FrameView) -> Section | None:
    """Each cache lookup the compile logged: the cache, its result and its line."""
    events = view.compile.cache_events
    if not events:
        return None
    rows: list[list[Inlines]] = [
        [[ev.cache], [ev.result], [Code(ev.artifact)], [str(ev.line)]] for ev in events
    ]
    table = Table([_("Cache"), _("Result"), _("Artifact"), _("Log line")], rows, [2, 1, 3, 1])
    return Section([_("Cache lookups")], [table], anchor="cache-lookups")
