"""Rank numbers as a page says them: runs (``0-3, 5``), so a thousand alike ranks are one."""

from __future__ import annotations

from collections.abc import Iterable


def number_ranges(numbers: Iterable[int]) -> str:
    """``0-3, 5, 7-9``: rank numbers as runs (a thousand alike ranks are one run)."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
