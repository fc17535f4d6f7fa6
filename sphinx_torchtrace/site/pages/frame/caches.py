"""The cache lookups of the compile, one row each."""

from __future__ import annotations

from ....trace import CacheEvent
from ....trace.analyses.caches import BUNDLED, carrier
from ...blocks import Code, Inlines, Section, Table
from ...words import _
from .view import FrameView


def section(view: FrameView) -> Section | None:
    """Each cache lookup the compile logged: the cache, its result and its line."""
    events = view.compile.cache_events
    if not events:
        return None
    rows: list[list[Inlines]] = [
        [[ev.cache], [_result(view, ev)], [Code(ev.artifact)], [str(ev.line)]] for ev in events
    ]
    table = Table([_("Cache"), _("Result"), _("Artifact"), _("Log line")], rows, [2, 1, 3, 1])
    return Section([_("Cache lookups")], [table], anchor="cache-lookups")


def _result(view: FrameView, ev: CacheEvent) -> str:
    """A lookup's result; for a bundled FX graph, that it came with an AOT-autograd hit."""
    if ev.cache != BUNDLED:
        return ev.result
    hit = carrier(view.compile, ev)
    if hit is None:
        return "loaded from inside an AOT-autograd cache entry, no lookup of it logged"
    return f"loaded from inside the aotautograd cache hit (line {hit.line}): no lookup of its own"
