"""Status of a compilation, with tlparse's legend and check order.

``missing`` (no compilation metrics) → ``error`` (a ``fail_type``) →
``empty`` (``graph_op_count`` 0 or null) → ``break`` (non-empty
``restart_reasons``) → ``ok``.  One deliberate difference from tlparse 0.4.3:
tlparse counts a *null* ``restart_reasons`` as a break; a null list holds no
restart, so here it does not.
"""

from __future__ import annotations

from collections.abc import Iterable

from .model import Metrics, Status


def combined_status(metrics: Iterable[Metrics]) -> Status:
    """The status over several ``compilation_metrics`` records (other kinds are ignored)."""
    records = [m for m in metrics if m.kind == "compilation_metrics"]
    if not records:
        return "missing"
    if any(m.fail_type for m in records):
        return "error"
    if any(not m.data.get("graph_op_count") for m in records):
        return "empty"
    if any(m.restart_reasons for m in records):
        return "break"
    return "ok"


def attempt_status(metrics: Iterable[Metrics], restarted: bool) -> Status:
    """The status of one attempt.

    torch logs a frame's compilation metrics once, under its last attempt; an
    earlier attempt was abandoned for a restart, so it is a ``break`` even
    though no metrics name it.
    """
    status = combined_status(metrics)
    if status == "missing" and restarted:
        return "break"
    return status
