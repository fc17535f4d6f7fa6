"""Which PyTorch wrote a log, and when: the overview's header facts.

Torch logs month, day and time, never the year; a version record may be missing, then the
compilation metrics may name the version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..model import RankTrace
from .naming import metrics_data


def torch_version(rank: RankTrace) -> str | None:
    """PyTorch version from the log's version record, else from any compilation metrics."""
    info = rank.torch_version if isinstance(rank.torch_version, dict) else {}
    version = info.get("pytorch_version")
    if version:
        return str(version)
    for c in rank.compiles:
        value = metrics_data(c).get("pytorch_version")
        if value:
            return str(value)
    return None


def torch_commit(rank: RankTrace) -> str | None:
    """The git commit PyTorch was built from, when the log's version record says."""
    info = rank.torch_version if isinstance(rank.torch_version, dict) else {}
    commit = info.get("commit") or info.get("git_version")
    return str(commit) if commit else None


@dataclass(frozen=True)
class CaptureSpan:
    """When a log was written: torch logs month, day and time, never the year, so the
    year of ``start`` and ``end`` (2024, a leap year) is a placeholder, never to be shown."""

    start: datetime | None
    end: datetime | None
    seconds: float | None  # the header says it in words (``overview/view.duration_text``)


def _parse_timestamp(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        # a leap year, so that "0229" parses; the year itself is never shown
        return datetime.strptime("2024" + value.strip(), "%Y%m%d %H:%M:%S.%f")
    except ValueError:
        try:
            return datetime.strptime("2024" + value.strip(), "%Y%m%d %H:%M:%S")
        except ValueError:
            return None


def capture_span(ranks: Sequence[RankTrace]) -> CaptureSpan | None:
    """First and last timestamps over the ranks, and the seconds between them."""
    starts = [t for t in (_parse_timestamp(r.first_timestamp) for r in ranks) if t]
    ends = [t for t in (_parse_timestamp(r.last_timestamp) for r in ranks) if t]
    if not starts and not ends:
        return None
    start = min(starts) if starts else None
    end = max(ends) if ends else None
    seconds: float | None = None
    if start and end:
        delta = (end - start).total_seconds()
        if delta < 0:  # the log crossed New Year: December to January
            delta += 366 * 86400
        seconds = delta
    return CaptureSpan(start, end, seconds)
