"""What each status means, said once: the overview's legend and every frame page agree.

The statuses themselves and tlparse's legend are the model's (``trace.STATUS_LEGEND``,
in tlparse's order); this adds the reading order of the legend and one sentence each.
"""

from __future__ import annotations

#: Statuses from best to worst outcome, as the legend lists them.
STATUS_ORDER = ("ok", "break", "error", "empty", "missing")

#: What a status says about a compile, in plain words.
STATUS_MEANING: dict[str, str] = {
    "ok": "Dynamo captured a graph and the backend compiled it, with no graph break or restart "
    "in its metrics.",
    "break": "Dynamo could not trace the whole frame (a graph break, or a restart of its "
    "analysis): the frame is split, and the code around the break runs in Python.",
    "error": "The compilation failed: its metrics record a failure type.",
    "empty": "Dynamo captured no operator worth compiling: the graph is empty, and the frame "
    "runs as Python.",
    "missing": "No compilation metrics were logged for this compile: it may have been cut "
    "short, or torch logged its outcome under another attempt.",
}

#: What the legend adds to a status's meaning (a compile's page says it for that compile).
LEGEND_MORE: dict[str, str] = {
    "error": "What torch did next (raised it to the program, or ran the frame eagerly) is "
    "said on the compile's page, where the log records it.",
}
