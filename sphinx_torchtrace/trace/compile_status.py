"""A compile's own status, from its records, with tlparse's legend and check order.

``missing`` (no compilation metrics) → ``error`` (a ``fail_type``) →
``empty`` (``graph_op_count`` 0 or null) → ``break`` (non-empty
``restart_reasons``) → ``ok``.  One deliberate difference from tlparse 0.4.3:
tlparse counts a *null* ``restart_reasons`` as a break; a null list holds no
restart, so here it does not.

The readers set it while they build the model (it is part of what a log says), so these
rules sit beside the model; statuses over a frame's attempts are :mod:`.analyses.status`.
"""

from __future__ import annotations

from collections.abc import Iterable

from .model import Compile, Metrics, Status


def combined_status(metrics: Iterable[Metrics]) -> Status:
    """The status over several ``compilation_metrics`` records (other kinds are ignored)."""
    records = [m for m in metrics if m.event == "compilation_metrics"]
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


# -- a TORCH_LOGS text log: no metrics, statuses from what the lines say --------------------


def text_status(c: Compile) -> Status:
    """``error`` (a failure), ``break`` (restarted, or a graph break), else ``missing``;
    ``[-/-]`` is no compile: ``missing``, whatever failure it holds."""
    if c.id.is_unknown:
        return "missing"
    if any(f.kind == "failure" for f in c.failures):
        return "error"
    if c.restarted or any(f.kind == "graph_break" for f in c.failures):
        return "break"
    return "missing"


def combined_text_status(compiles: Iterable[Compile]) -> Status:
    """The status over several compiles of a text log: the worst of theirs."""
    statuses = {c.status for c in compiles}
    for status in ("error", "break"):
        if status in statuses:
            return "error" if status == "error" else "break"
    return "missing"
