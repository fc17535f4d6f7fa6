"""What each status means, said once: the overview's legend and every frame page agree.

The statuses themselves and tlparse's legend are the model's (``trace.STATUS_LEGEND``,
in tlparse's order); this adds the reading order of the legend and one sentence each.
"""

from __future__ import annotations

#: Statuses from best to worst outcome, as the legend lists them.
STATUS_ORDER = ("ok", "break", "error", "empty", "missing")

#: What a status says about a compile, in plain words.
STATUS_MEANING: dict[str, str] = {
    "ok": "Dynamo captured a graph and the backend compiled it: the log records no failure, "
    "restart or empty graph for it.",
    "break": "The log records a restart of Dynamo's analysis or a graph break; at a graph "
    "break the frame is split, and the code at the break runs in Python.",
    "error": "The compilation failed: the log records a failure for it.",
    "empty": "The log records an empty graph (graph_op_count 0 or none): Dynamo captured no "
    "operator to compile.",
    "missing": "No compilation metrics were logged for this compile: it may have been cut "
    "short, or torch logged its outcome under another attempt.",
}

#: What the legend adds to a status's meaning (a compile's page says it for that compile).
LEGEND_MORE: dict[str, str] = {
    "error": "What torch did next (raised it to the program, or ran the frame eagerly) is "
    "said on the compile's page, where the log records it.",
}
