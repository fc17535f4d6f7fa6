"""The failures table's rows: each graph break and compile error once, errors first.

The grouping itself is :mod:`.graph_breaks`'s; the words for each kind of row are the
page's (``site/pages/overview/failures.py``).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import Compile
from .graph_breaks import EventGroup, break_events, event_groups, parse_message


def reason_headline(reason: str) -> str:
    """The line that names a failure, without the location torch puts first (see
    :func:`.graph_breaks.parse_message`)."""
    return parse_message(reason).headline


def failure_groups(compiles: Iterable[Compile]) -> list[EventGroup]:
    """The rows of the failures table: each graph break and error once, errors first."""
    return event_groups(break_events([c for c in compiles if not c.id.is_unknown]))
