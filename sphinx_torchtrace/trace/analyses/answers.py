"""What ``summary`` answers: each thing a user acts on, named, placed, and where the log
records it.

:func:`.glance.triage` says how many (the overview's glance); this says which, in the
overview's order: each compile error and graph break (errors first, as the failures
table) with torch's words for it, the place in the user's code and its records
(``log:line``); each recompiled function with the guard that failed; the slowest compiles.
Nothing is guessed: where torch logged no place or no reason, the answer has None.

The analyses are the pages' own (:func:`.failures.failure_groups`,
:func:`.recompiles.recompiled_functions`, :func:`.phases.compile_seconds`), so the terminal
and the pages name the same things.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..model import Compile, RankTrace, Trace
from .compare import reasons_record
from .failures import failure_groups
from .graph_breaks import EventGroup
from .guards import GuardFailure, GuardKind
from .naming import compiled_function, rank_number
from .outcome import Outcome, Refusal, refusal
from .phases import compile_seconds
from .recompiles import recompiled_functions


@dataclass(frozen=True)
class Record:
    """A record of a log: what ``sphinx-torchtrace show LOG:LINE`` prints."""

    log: str
    line: int

    def __str__(self) -> str:
        return f"{self.log}:{self.line}"

    def as_json(self) -> dict[str, Any]:
        return {"log": self.log, "line": self.line}


@dataclass(frozen=True)
class CompileRef:
    """A compile by its label, and its rank's number where the trace has several."""

    label: str
    rank: int | None = None

    def __str__(self) -> str:
        return self.label if self.rank is None else f"{self.label} on rank {self.rank}"


@dataclass
class Failure:
    """One row of the overview's failures table, over every rank that logged it."""

    category: str  # "error", "graph_break" or "restart" (:data:`.graph_breaks.Category`)
    headline: str  # torch's name for it: the break's type line, or the error's message headline
    error_type: str | None  # the exception type of an error
    registry_id: str | None  # "GB0025": the graph-break registry's page of it
    explanation: str | None  # torch's "Explanation:", else None
    reason: str | None  # torch's "Graph Break Reason:" line, where it logged one
    place: str | None  # ``file.py:12`` in the user's code; None where the log names none
    torch_place: str | None  # where in torch it was raised, when torch named that
    outcome: Outcome | None  # what followed an error; None for a break
    count: int = 0
    compiles: list[CompileRef] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)  # each event's first record

    def as_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "kind": self.headline,
            "error_type": self.error_type,
            "registry_id": self.registry_id,
            "explanation": self.explanation,
            "reason": self.reason,
            "place": self.place,
            "torch_place": self.torch_place,
            "outcome": self.outcome,
            "count": self.count,
            "compile_ids": [_ref_json(c) for c in self.compiles],
            "records": [r.as_json() for r in self.records],
        }


@dataclass(frozen=True)
class GuardAnswer:
    """One new version (or refusal) of a function, and the check of an earlier one that
    failed first, as :attr:`.recompiles.Recompile.headline` chooses it."""

    compile: CompileRef
    guard: str | None  # the failed guard's code; None where the log records no reason
    kind: GuardKind | None  # what it checks
    against: str | None  # the label of the version whose guard failed
    record: Record | None  # where the reasons are logged
    refused: Refusal | None = None  # why no version was made, for a refusal

    def as_json(self) -> dict[str, Any]:
        return {
            **_ref_json(self.compile),
            "guard": self.guard,
            "guard_kind": self.kind,
            "against": self.against,
            "record": self.record.as_json() if self.record else None,
            "refused": self.refused,
        }


@dataclass
class Recompiled:
    """A function compiled again, on one rank: its recompiles and refusals, each with the
    guard that failed."""

    function: str  # as the pages show it (:attr:`.recompiles.RecompiledFunction.shown`)
    place: str | None  # where the function starts
    rank: int | None
    versions: int
    recompiles: list[GuardAnswer] = field(default_factory=list)
    refused: list[GuardAnswer] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "place": self.place,
            "rank": self.rank,
            "versions": self.versions,
            "recompiles": [g.as_json() for g in self.recompiles],
            "refused": [g.as_json() for g in self.refused],
        }


@dataclass(frozen=True)
class SlowCompile:
    """A compile and its whole-frame compile time, as its metrics record it."""

    compile: CompileRef
    seconds: float
    function: str | None
    place: str | None
    record: Record | None

    def as_json(self) -> dict[str, Any]:
        return {
            **_ref_json(self.compile),
            "seconds": round(self.seconds, 6),
            "function": self.function,
            "place": self.place,
            "record": self.record.as_json() if self.record else None,
        }


@dataclass(frozen=True)
class LogRead:
    """Which log(s) a path stood for, and why: a folder's newest, its ranks, or the file."""

    path: str  # as the user named it
    logs: list[str]  # the files read, in rank order
    folder: bool
    why: str  # "the only log", "the newest of 3 logs by recorded time", "4 rank logs" ...

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "read": self.logs, "folder": self.folder, "why": self.why}


@dataclass
class Answers:
    """Everything ``summary`` names, each list complete (the printer bounds them)."""

    log: LogRead
    failures: list[Failure]
    recompiled: list[Recompiled]
    slowest: list[SlowCompile]


def answers(trace: Trace, path: str) -> Answers:
    """The answers of a trace read from ``path``."""
    several = trace.is_multi_rank
    failures: dict[tuple[Any, ...], Failure] = {}
    recompiled: list[Recompiled] = []
    slow: list[SlowCompile] = []
    for rank in trace.ranks:
        number = rank_number(trace, rank) if several else None
        for group in failure_groups(rank.compiles):
            _add_failure(failures, group, rank, number)
        recompiled += _recompiled(rank, number)
        slow += _timed(rank, number)
    order = {"error": 0, "graph_break": 1, "restart": 2}
    listed = sorted(failures.values(), key=lambda f: (order.get(f.category, 3), -f.count))
    slow.sort(key=lambda s: -s.seconds)
    return Answers(log_read(trace, path), listed, recompiled, slow)


def _ref(compile_: Compile, rank: int | None) -> CompileRef:
    return CompileRef(compile_.label, rank)


def _ref_json(ref: CompileRef) -> dict[str, Any]:
    return {"compile_id": ref.label, "rank": ref.rank}


def _add_failure(
    found: dict[tuple[Any, ...], Failure], group: EventGroup, rank: RankTrace, number: int | None
) -> None:
    """Fold a rank's row into the row of the same break (one break on four ranks is one
    row, as the overview counts it), adding its compiles and records."""
    first = group.message.first_part
    row = found.get(group.identity)
    if row is None:
        event = group.events[0]
        row = found[group.identity] = Failure(
            category=group.category,
            headline=first.type if group.message.parts else group.message.headline,
            error_type=group.type,
            registry_id=first.registry_id,
            explanation=first.explanation,
            reason=group.message.reason,
            place=group.location,
            torch_place=event.torch_location,
            outcome=group.outcome,
        )
    row.count += group.count
    row.compiles += [_ref(c, number) for c in group.compiles]
    row.records += [Record(rank.path, e.failure.line) for e in group.events]


def _recompiled(rank: RankTrace, number: int | None) -> list[Recompiled]:
    out: list[Recompiled] = []
    for fn in recompiled_functions(rank):
        entry = Recompiled(fn.shown or fn.frame_label, fn.place, number, fn.versions)
        for rc in fn.recompiles:
            entry.recompiles.append(_guard(rank, rc.compile, rc.headline, number))
        for rc in fn.refused:
            entry.refused.append(
                _guard(rank, rc.compile, rc.headline, number, refused=refusal(rc.compile))
            )
        out.append(entry)
    return out


def _guard(
    rank: RankTrace,
    compile_: Compile,
    first: GuardFailure | None,
    number: int | None,
    refused: Refusal | None = None,
) -> GuardAnswer:
    where = reasons_record(compile_)
    record = Record(rank.path, where[1]) if where is not None else None
    if first is None:
        return GuardAnswer(_ref(compile_, number), None, None, None, record, refused)
    return GuardAnswer(
        _ref(compile_, number), first.guard, first.kind, first.previous_label, record, refused
    )


def _timed(rank: RankTrace, number: int | None) -> list[SlowCompile]:
    out: list[SlowCompile] = []
    for c in rank.compiles:
        if c.id.is_unknown or (seconds := compile_seconds(c)) is None:
            continue
        name, place = compiled_function(rank, c)
        metrics = c.compilation_metrics
        record = Record(rank.path, metrics[0].line) if metrics else None
        out.append(SlowCompile(_ref(c, number), seconds, name, place, record))
    return out


def log_read(trace: Trace, path: str) -> LogRead:
    """Which logs were read for ``path``, and why those (as the folder rule chose them)."""
    logs = [r.path for r in trace.ranks]
    folder = os.path.isdir(path)
    if trace.ranks and all(r.source == "torch_logs" for r in trace.ranks):
        why = "a TORCH_LOGS text log: what its lines say, no compilation metrics"
    elif not folder:
        why = "the file named"
    elif trace.chosen_by == "ranks" or len(logs) > 1:
        why = f"the folder's {len(logs)} rank log{'' if len(logs) == 1 else 's'}"
    elif trace.chosen_by:
        among = len(trace.not_shown) + 1
        why = f"the newest of the folder's {among} logs by {trace.chosen_by}"
    else:
        why = "the folder's only log"
    return LogRead(path, logs, folder, why)


_T = TypeVar("_T")


def bounded(items: Sequence[_T], limit: int | None) -> tuple[list[_T], int]:
    """The first ``limit`` items (all with None) and how many more there are."""
    if limit is None or len(items) <= limit:
        return list(items), 0
    return list(items[:limit]), len(items) - limit
