"""vLLM's own figures in a comparison of two runs: cold or warm, pieces compiled, reused
and loaded, vLLM's compile time and its seconds per compile range, each side as its view
reads it (:mod:`..analyses.vllm`: vLLM logs its pieces without compile ids, so the frames
a comparison matches say little of them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..analyses.vllm import VllmView, map_cells, range_text, summary_data, summary_text, vllm_view
from ..model import RankTrace


@dataclass(frozen=True)
class VllmChange:
    """Each run's vLLM line and figures; None on a side that logged no vLLM records."""

    baseline: str | None
    new: str | None
    baseline_data: dict[str, Any] | None
    new_data: dict[str, Any] | None
    #: Where one run compiled and the other loaded (cold and warm): each cold piece with
    #: the warm run's load of it, in the cold log's order; and which run is the cold one.
    cells: tuple[dict[str, Any], ...] = ()
    cold_run: str | None = None  # "baseline" or "new"

    def range_seconds(self) -> list[tuple[str, float | None, float | None]]:
        """Seconds per compile range in each run (summed over compile calls), ranges of
        either run in order of first appearance."""
        old, new = _per_range(self.baseline_data), _per_range(self.new_data)
        keys = list(dict.fromkeys([*old, *new]))
        return [(k, old.get(k), new.get(k)) for k in keys]

    def as_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"baseline": self.baseline_data, "new": self.new_data}
        if self.cells:
            found["cold_run"] = self.cold_run
            found["cells"] = list(self.cells)
        return found


def vllm_change(baseline: RankTrace, new: RankTrace) -> VllmChange | None:
    """Both runs' vLLM figures, or None where neither logged vLLM's records."""
    old, now = vllm_view(baseline), vllm_view(new)
    if old is None and now is None:
        return None
    cells: tuple[dict[str, Any], ...] = ()
    cold_run = None
    if old is not None and now is not None:
        if old.startup == "cold" and now.warm:
            cells, cold_run = _cells(old, now), "baseline"
        elif old.warm and now.startup == "cold":
            cells, cold_run = _cells(now, old), "new"
    return VllmChange(
        summary_text(old) if old is not None else None,
        summary_text(now) if now is not None else None,
        summary_data(old) if old is not None else None,
        summary_data(now) if now is not None else None,
        cells,
        cold_run,
    )


def _cells(cold: VllmView, warm: VllmView) -> tuple[dict[str, Any], ...]:
    """Each cold piece, the warm load of its output code file (for a piece the cold run
    reused, of its source's), as plain JSON values with their lines."""
    labels = {id(c): cold.call_label(c) for c in cold.calls}
    call_of = {id(p): labels.get(id(c)) for c in cold.calls for p in c.pieces}
    return tuple(
        {
            "call": call_of.get(id(m.piece)),
            "subgraph": m.piece.submod,
            "range": range_text(m.piece.range, m.piece.single_size),
            "cold_line": m.piece.line,
            "cold_wall_seconds": m.piece.wall_seconds,
            "reused": m.piece.reused,
            "via_line": m.via.line if m.via is not None else None,
            "warm_line": m.load.line if m.load is not None else None,
            "output_code": m.load.filename if m.load is not None else None,
        }
        for m in map_cells(cold, warm)
    )


def _per_range(data: dict[str, Any] | None) -> dict[str, float]:
    found: dict[str, float] = {}
    for call in (data or {}).get("calls", []):
        for key, seconds in call.get("seconds_per_range", {}).items():
            if isinstance(seconds, (int, float)):
                found[key] = found.get(key, 0.0) + float(seconds)
    return found
