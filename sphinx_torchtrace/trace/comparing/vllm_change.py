"""vLLM's own figures in a comparison of two runs: cold or warm, pieces compiled, reused
and loaded, vLLM's compile time and its seconds per compile range, each side as its view
reads it (:mod:`..analyses.vllm`: vLLM logs its pieces without compile ids, so the frames
a comparison matches say little of them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..analyses.vllm import summary_data, summary_text, vllm_view
from ..model import RankTrace


@dataclass(frozen=True)
class VllmChange:
    """Each run's vLLM line and figures; None on a side that logged no vLLM records."""

    baseline: str | None
    new: str | None
    baseline_data: dict[str, Any] | None
    new_data: dict[str, Any] | None

    def range_seconds(self) -> list[tuple[str, float | None, float | None]]:
        """Seconds per compile range in each run (summed over compile calls), ranges of
        either run in order of first appearance."""
        old, new = _per_range(self.baseline_data), _per_range(self.new_data)
        keys = list(dict.fromkeys([*old, *new]))
        return [(k, old.get(k), new.get(k)) for k in keys]

    def as_json(self) -> dict[str, Any]:
        return {"baseline": self.baseline_data, "new": self.new_data}


def vllm_change(baseline: RankTrace, new: RankTrace) -> VllmChange | None:
    """Both runs' vLLM figures, or None where neither logged vLLM's records."""
    old, now = vllm_view(baseline), vllm_view(new)
    if old is None and now is None:
        return None
    return VllmChange(
        summary_text(old) if old is not None else None,
        summary_text(now) if now is not None else None,
        summary_data(old) if old is not None else None,
        summary_data(now) if now is not None else None,
    )


def _per_range(data: dict[str, Any] | None) -> dict[str, float]:
    found: dict[str, float] = {}
    for call in (data or {}).get("calls", []):
        for key, seconds in call.get("seconds_per_range", {}).items():
            if isinstance(seconds, (int, float)):
                found[key] = found.get(key, 0.0) + float(seconds)
    return found
