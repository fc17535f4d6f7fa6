"""Autotuning per compile: which operations Inductor benchmarked, for how long, and what won.

Inductor times each template it benchmarks with a ``dynamo_timed`` span named after it
(``mm_template_autotuning``, ``packed_linear_template_precompiling``); the span's arguments
carry the shapes and, when ``max_autotune_report_choices_stats`` is on, the choices' stats
(``autotune_choices_stats``: how many, the best kernel and its time).  A compile's
``compilation_metrics`` record adds them up as ``compile_time_autotune_time_us``.  Only what
those records say is reported: no stats logged means no winner named.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..kept import Kept
from ..model import Compile, RankTrace
from .timings import MAX_SECONDS, MAX_TIMESTAMP_US, _compile_lookup, _parsed_events, plausible

#: Span suffixes: the benchmark itself, and compiling the choices before it.
_TUNING = "_template_autotuning"
_PRECOMPILING = "_template_precompiling"
#: The metric that adds a compile's autotuning up, in microseconds.
METRIC = "compile_time_autotune_time_us"
#: A share of a compile's time (or more) that a glance calls out.
NOTABLE_SHARE = 0.1
#: Longest argument string kept (a shape list of a huge graph stays readable).
_MAX_TEXT = 300


@dataclass(frozen=True)
class Benchmark:
    """One operation benchmarked once: its span, shapes and, where logged, the winner."""

    operation: str  # the template's name: ``mm``, ``packed_linear``
    seconds: float
    precompile_seconds: float | None
    shapes: str | None
    dtypes: str | None
    choices: int | None
    best_kernel: str | None
    best_ms: float | None
    line: int  # the span's end event, where the stats are
    start_line: int


@dataclass(frozen=True)
class CompileAutotuning:
    """A compile's autotuning: its benchmarks in log order and the metric's total."""

    compile: Compile
    benchmarks: tuple[Benchmark, ...]
    total_seconds: float | None  # ``compile_time_autotune_time_us``
    total_line: int | None
    compile_seconds: float | None  # ``entire_frame_compile_time_s``

    @property
    def seconds(self) -> float:
        """The metric's total where logged, else the benchmarks' spans added up."""
        if self.total_seconds is not None:
            return self.total_seconds
        return sum(b.seconds + (b.precompile_seconds or 0.0) for b in self.benchmarks)

    @property
    def share(self) -> float | None:
        """Autotuning's share of the compile's own time, when both are logged."""
        if not self.compile_seconds:
            return None
        return min(self.seconds / self.compile_seconds, 1.0)

    @property
    def notable(self) -> bool:
        share = self.share
        return share is not None and share >= NOTABLE_SHARE

    def as_json(self) -> dict[str, Any]:
        """``summary --json``: the compile, its total, share and benchmarks, with lines."""
        return {
            "compile": self.compile.label,
            "seconds": self.seconds,
            "metric_line": self.total_line,
            "share": self.share,
            "benchmarks": [
                {
                    "operation": b.operation,
                    "seconds": b.seconds,
                    "precompile_seconds": b.precompile_seconds,
                    "shapes": b.shapes,
                    "dtypes": b.dtypes,
                    "choices": b.choices,
                    "best_kernel": b.best_kernel,
                    "best_ms": b.best_ms,
                    "lines": [b.start_line, b.line],
                }
                for b in self.benchmarks
            ],
        }


def autotuning(rank: RankTrace) -> list[CompileAutotuning]:
    """Every compile of the rank that logged autotuning (a span or a nonzero metric);
    worked out once per rank (a page per compile asks)."""
    return _KEPT(rank)


def _autotuning(rank: RankTrace) -> list[CompileAutotuning]:
    # the spans are read only where a metric says there was autotuning, or where no
    # metric has the field at all (a torch that did not log it): the events are most
    # of a log's records and most logs never autotune
    metrics = [_metrics(c) for c in rank.compiles]
    logged = any(_has_field(c) for c in rank.compiles)
    spans = _benchmarks(rank) if not logged or any(m[0] for m in metrics) else {}
    found: list[CompileAutotuning] = []
    for compile_, (total, line, compile_seconds) in zip(rank.compiles, metrics, strict=True):
        benchmarks = spans.get(id(compile_), [])
        if not benchmarks and not total:
            continue
        found.append(CompileAutotuning(compile_, tuple(benchmarks), total, line, compile_seconds))
    return found


def of_compile(rank: RankTrace, compile_: Compile) -> CompileAutotuning | None:
    """The autotuning of one compile, or None when it logged none."""
    for entry in autotuning(rank):
        if entry.compile is compile_:
            return entry
    return None


_KEPT: Kept[RankTrace, list[CompileAutotuning]] = Kept(_autotuning)


def _has_field(compile_: Compile) -> bool:
    return any(METRIC in m.data for m in compile_.compilation_metrics)


def _metrics(compile_: Compile) -> tuple[float | None, int | None, float | None]:
    total: float | None = None
    line: int | None = None
    compile_seconds: float | None = None
    for metrics in compile_.compilation_metrics:
        micros = plausible(metrics.data.get(METRIC), MAX_SECONDS * 1e6)
        if micros is not None and total is None:
            total, line = micros / 1e6, metrics.line
        seconds = plausible(metrics.data.get("entire_frame_compile_time_s"))
        if seconds is not None and compile_seconds is None:
            compile_seconds = seconds
    return total, line, compile_seconds


def _benchmarks(rank: RankTrace) -> dict[int, list[Benchmark]]:
    """The rank's autotuning spans, paired B/E per process, thread and name, by compile."""
    owner = _compile_lookup(rank)
    open_at: dict[tuple[str, str, str], list[tuple[float, int]]] = defaultdict(list)
    precompiled: dict[tuple[int, str], float] = {}
    found: dict[int, list[Benchmark]] = defaultdict(list)
    for event, data in _parsed_events(rank):
        name = data.get("name")
        if not isinstance(name, str) or not name.endswith((_TUNING, _PRECOMPILING)):
            continue
        ts = plausible(data.get("ts"), MAX_TIMESTAMP_US)
        if ts is None:
            continue
        key = (str(data.get("pid")), str(data.get("tid")), name)
        phase = data.get("ph")
        if phase == "B":
            open_at[key].append((ts, event.line))
            continue
        if phase != "E" or not open_at[key]:
            continue
        start, start_line = open_at[key].pop()
        if ts < start:
            continue
        compile_ = owner(event)
        if compile_ is None:
            continue
        seconds = (ts - start) / 1e6
        if name.endswith(_PRECOMPILING):
            operation = name[: -len(_PRECOMPILING)]
            precompiled[(id(compile_), operation)] = seconds
            continue
        operation = name[: -len(_TUNING)]
        raw_args = data.get("args")
        args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
        stats = _stats(args.get("autotune_choices_stats"))
        found[id(compile_)].append(
            Benchmark(
                operation=operation[:_MAX_TEXT],
                seconds=seconds,
                precompile_seconds=precompiled.pop((id(compile_), operation), None),
                shapes=_text(args.get("autotune_shape")),
                dtypes=_text(args.get("autotune_dtypes")),
                choices=_count(stats.get("num_choices")),
                best_kernel=_text(stats.get("best_kernel")),
                best_ms=plausible(stats.get("best_time")),
                line=event.line,
                start_line=start_line,
            )
        )
    return found


def _stats(value: Any) -> dict[str, Any]:
    """The choices' stats: a JSON object in a string (or already an object)."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str) or len(value) > 100_000:
        return {}
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _text(value: Any) -> str | None:
    return value[:_MAX_TEXT] if isinstance(value, str) and value else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def totals(entries: Sequence[CompileAutotuning]) -> tuple[float, int]:
    """Seconds spent autotuning over the compiles, and how many operations were benchmarked."""
    return sum(e.seconds for e in entries), sum(len(e.benchmarks) for e in entries)
