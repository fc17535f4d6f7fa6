"""How a compared figure is said in words: seconds, time per call, a ratio.

One wording for the report's lines (:mod:`.text_report`) and the regressions' messages
(:mod:`.regressions`), so a figure reads the same in both.
"""

from __future__ import annotations

import math

from .changes import Change


def seconds_text(value: float | None) -> str:
    """``12.34 s``; ``-`` where a run has no time."""
    return "-" if value is None else f"{value:.2f} s"


def per_call_text(change: Change) -> str:
    """``0.120 ms -> 0.150 ms``: own time per call on each side, ``not run`` where a side
    has no call."""

    def one(side: tuple[int, float] | None) -> str:
        if not side or not side[0]:
            return "not run"
        return f"{side[1] / side[0] / 1000:.3f} ms"

    return f"{one(change.baseline)} -> {one(change.new)}"


def times_text(ratio: float) -> str:
    """``x1.25``; a ratio that is no finite number is said to be one."""
    return f"x{ratio:.2f}" if math.isfinite(ratio) else "cannot be compared"
