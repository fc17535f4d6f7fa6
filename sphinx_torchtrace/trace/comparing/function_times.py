"""Which function's compile time changed between two runs, and in which phase.

Each run's seconds come from its compile-time tree (:mod:`..analyses.compile_time`: file →
function → compile → phase, every leaf a record's figure); functions are matched by their
name and their file's last part (the checkout's folder may differ between the runs).
Compile times are noisy: the pages say so beside these figures.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ..analyses import compile_time as ct
from ..model import RankTrace

#: Functions a page lists, the most changed first.
SHOWN = 10


@dataclass(frozen=True)
class FunctionTimes:
    """One function's compile seconds by phase in each run (empty where it did not compile)."""

    function: str
    file: str  # the file's last part
    baseline: dict[str, float]
    new: dict[str, float]

    @property
    def baseline_seconds(self) -> float:
        return sum(self.baseline.values())

    @property
    def new_seconds(self) -> float:
        return sum(self.new.values())

    @property
    def change(self) -> float:
        return self.new_seconds - self.baseline_seconds

    def most_changed_phase(self) -> tuple[str, float] | None:
        """The phase whose seconds changed most (by how much), where any did."""
        changes = {
            phase: self.new.get(phase, 0.0) - self.baseline.get(phase, 0.0)
            for phase in {*self.baseline, *self.new}
        }
        if not changes:
            return None
        phase = max(sorted(changes), key=lambda p: abs(changes[p]))
        return (phase, changes[phase]) if changes[phase] else None

    def as_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "file": self.file,
            "baseline_seconds": round(self.baseline_seconds, 6),
            "new_seconds": round(self.new_seconds, 6),
            "baseline": {k: round(v, 6) for k, v in sorted(self.baseline.items())},
            "new": {k: round(v, 6) for k, v in sorted(self.new.items())},
        }


def function_times(baseline: RankTrace, new: RankTrace) -> list[FunctionTimes]:
    """Every function that compiled in either run, the largest change first."""
    old, now = _by_function(baseline), _by_function(new)
    keys = list(now) + [k for k in old if k not in now]
    found = [FunctionTimes(k[0], k[1], old.get(k, {}), now.get(k, {})) for k in keys]
    found.sort(key=lambda f: (-abs(f.change), f.function, f.file))
    return found


def _by_function(rank: RankTrace) -> dict[tuple[str, str], dict[str, float]]:
    seconds: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for file in ct.compile_time_tree(rank).children:
        name = file.label.replace("\\", "/").rsplit("/", 1)[-1]
        for function in file.children:
            phases = seconds[(function.label, name)]
            for leaf in function.leaves():
                if leaf.phase is not None:
                    phases[leaf.phase] += leaf.seconds
    return {key: dict(phases) for key, phases in seconds.items()}
