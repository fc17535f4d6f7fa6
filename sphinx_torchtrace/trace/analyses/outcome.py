"""What happened after a compile failed, as far as the log records it, and which record says so.

A failed compile ends one of three ways: torch raises the error to the program that called
the function, or it logs the error and runs the frame without compiling it (eagerly), or,
past the recompile limit, it runs the versions it already compiled and no new one.  The log
never names the outcome; it records what decides it (read from ``ConvertFrame.__call__`` and
``_compile`` in ``torch/_dynamo/convert_frame.py``, torch 2.6 to 2.15):

- ``UncapturedHigherOrderOpError`` and ``ResumePrologueTracingError`` are always raised;
- ``Unsupported`` and ``UserError`` are graph breaks torch could not resume from: raised
  under ``fullgraph=True`` (or ``error_on_graph_break``), else the frame runs eagerly.  The
  log does not record ``fullgraph``, so the outcome is said only where another record
  decides it (torch's own "skip"/"fall back to eager" words, the recompile limit);
- any other failure is raised when the compile's ``config_suppress_errors`` is false, and
  run eagerly when it is true (``suppressed``: unless ``fullgraph=True``, which the log does
  not record).

Every outcome names the rule, the record and the fields it was read from, so a page can
show them and say why (its words are the pages': ``site/outcome_words.py``).
Nothing here guesses: where no record decides, the outcome is ``not_recorded``.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Literal, get_args

from ..model import Compile, Metrics

Outcome = Literal["raised", "eager", "suppressed", "limit", "not_recorded"]

#: Failure types torch raises to the caller whatever ``suppress_errors`` says.
ALWAYS_RAISED = frozenset({"UncapturedHigherOrderOpError", "ResumePrologueTracingError"})
#: Failure types torch treats as a graph break it cannot resume from ("soft" failures).
GRAPH_BREAK_TYPES = frozenset({"Unsupported", "UserError", "RecompileLimitExceeded"})
#: Built-in exception types ``_compile`` lets through as they are; any other built-in
#: exception raised while compiling is re-raised as ``InternalTorchDynamoError`` (its
#: ``fail_type`` keeps the original name).
PASSED_THROUGH = frozenset({"AssertionError", "IndexError"})
INTERNAL = "InternalTorchDynamoError"
#: Words torch writes in a message when it runs the frame eagerly after a soft failure.
_EAGER_WORDS = (
    "frame skipped",
    "fall back to eager",
    "falling back to eager",  # "Skipping the function and falling back to eager."
    "skip tracing the frame",
)
_LIMIT_WORDS = ("recompile limit exceeded", "cache_size_limit reached", "cache limit")
#: Failure types that are torch refusing a recompile (``convert_frame._compile``): past the
#: limit under ``fullgraph=True`` or ``fail_on_recompile_limit_hit`` it raises
#: ``FailOnRecompileLimitHit``; under ``error_on_recompile`` it raises ``RecompileError``
#: before compiling.  Neither compiled anything.
LIMIT_RAISED = "FailOnRecompileLimitHit"
ERROR_ON_RECOMPILE = "RecompileError"

#: Why torch made no new version of a function where it was asked for one.
Refusal = Literal["limit", "limit_raised", "error_on_recompile"]


#: Which of torch's rules decided the outcome (the module's docstring lists them); the pages
#: say each in words (``site/outcome_words.py``).
Rule = Literal[
    "no_metrics",  # read from a text log: no compilation metrics name the settings
    "always_raised",  # a type torch always raises
    "recompile_limit",  # the recompile limit was hit
    "torch_said_eager",  # torch says, in a record, that it fell back to eager
    "fullgraph_not_logged",  # a graph break it could not resume from; fullgraph not logged
    "suppress_errors_false",
    "suppress_errors_true",
    "suppress_errors_not_logged",
]
RULES: tuple[Rule, ...] = get_args(Rule)


@dataclass(frozen=True)
class FailureOutcome:
    """How a failed compile ended, in the log's own terms.

    ``rule`` is the rule of torch's that the fields named in ``fields`` of the record at
    ``line`` (``record``) decide, never a guess; ``outcome`` is ``not_recorded`` where the
    log does not decide it.
    """

    outcome: Outcome
    rule: Rule
    record: str  # the record kind the fields were read from ("failure": a text log's line)
    line: int  # its line in the log
    fields: tuple[str, ...]
    fail_type: str = ""  # as the record names it; "" for a text log's failure
    #: The type torch raised it as, where not ``fail_type`` (``InternalTorchDynamoError``).
    raised_as: str | None = None


def _failed_record(compile_: Compile) -> Metrics | None:
    for m in compile_.compilation_metrics:
        if m.fail_type:
            return m
    return None


def refusal(compile_: Compile) -> Refusal | None:
    """The one definition of a refused compile: torch was asked for a new version of a
    function and made none because of a setting, not because compiling failed.

    ``limit``: past the recompile limit (an ``Unsupported`` "recompile limit exceeded",
    or ``RecompileLimitExceeded``), the calls run the versions it has or eagerly;
    ``limit_raised``: the same, raised as ``FailOnRecompileLimitHit`` (``fullgraph=True`` or
    ``fail_on_recompile_limit_hit``); ``error_on_recompile``: ``RecompileError``, raised
    instead of recompiling.  None for any other compile, failed or not.
    """
    record = _failed_record(compile_)
    if record is None:
        return None
    fail_type = str(record.fail_type)
    if fail_type == LIMIT_RAISED:
        return "limit_raised"
    if fail_type == ERROR_ON_RECOMPILE:
        return "error_on_recompile"
    if fail_type == "RecompileLimitExceeded":
        return "limit"
    if fail_type in GRAPH_BREAK_TYPES or fail_type.endswith("Unsupported"):
        reason = str(record.data.get("fail_reason") or "").lower()
        if any(w in reason for w in _LIMIT_WORDS):
            return "limit"
    return None


def failure_outcome(compile_: Compile) -> FailureOutcome | None:
    """The outcome of ``compile_``'s failure, with its evidence; None when it did not fail.

    A compile whose failure was read from a text log (no metrics) is ``not_recorded``.
    """
    record = _failed_record(compile_)
    if record is None:
        failure = next((f for f in compile_.failures if f.kind == "failure"), None)
        if failure is None:
            return None
        return FailureOutcome("not_recorded", "no_metrics", "failure", failure.line, ())
    fail_type = str(record.fail_type)
    data = record.data
    reason = str(data.get("fail_reason") or "")
    lowered = reason.lower()
    kind, line = record.event, record.line
    if fail_type in ALWAYS_RAISED:
        return FailureOutcome("raised", "always_raised", kind, line, ("fail_type",), fail_type)
    if fail_type in GRAPH_BREAK_TYPES or fail_type.endswith("Unsupported"):
        if any(w in lowered for w in _LIMIT_WORDS):
            read = ("fail_type", "fail_reason")
            return FailureOutcome("limit", "recompile_limit", kind, line, read, fail_type)
        eager_record = _eager_words(compile_)
        if eager_record is not None:
            said_in, said_at = eager_record
            said: tuple[str, ...] = ("fail_reason",) if said_in == kind else ()
            return FailureOutcome("eager", "torch_said_eager", said_in, said_at, said, fail_type)
        return FailureOutcome(
            "not_recorded", "fullgraph_not_logged", kind, line, ("fail_type",), fail_type
        )
    suppress = data.get("config_suppress_errors")
    wrapped = wrapped_as(fail_type)
    decided = ("fail_type", "config_suppress_errors")
    if suppress is False:
        return FailureOutcome(
            "raised", "suppress_errors_false", kind, line, decided, fail_type, wrapped
        )
    if suppress is True:
        return FailureOutcome(
            "suppressed", "suppress_errors_true", kind, line, decided, fail_type, wrapped
        )
    return FailureOutcome(
        "not_recorded", "suppress_errors_not_logged", kind, line, ("fail_type",), fail_type, wrapped
    )


def wrapped_as(fail_type: str) -> str | None:
    """``InternalTorchDynamoError`` for a built-in exception type torch re-raises as one
    (a ``KeyError`` from inside Dynamo's tracing is torch's error, not the program's)."""
    found = getattr(builtins, fail_type, None)
    if isinstance(found, type) and issubclass(found, Exception) and fail_type not in PASSED_THROUGH:
        return INTERNAL
    return None


def _eager_words(compile_: Compile) -> tuple[str, int] | None:
    """The record where torch says, in its words, that it ran the frame eagerly."""
    for m in compile_.compilation_metrics:
        if any(w in str(m.data.get("fail_reason") or "").lower() for w in _EAGER_WORDS):
            return m.event, m.line
    for a in compile_.artifacts_named("dynamo_graph_break_reason"):
        text = a.text()[:20_000].lower() if a.payload is not None else ""
        if any(w in text for w in _EAGER_WORDS):
            return "dynamo_graph_break_reason", a.line
    return None
