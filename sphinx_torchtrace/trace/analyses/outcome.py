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

Every outcome names the record and the fields it was read from, so a page can show them.
Nothing here guesses: where no record decides, the outcome is ``not_recorded``.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Literal

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


@dataclass(frozen=True)
class FailureOutcome:
    """How a failed compile ended, in the log's own terms.

    ``because`` is one plain sentence made from the fields named in ``fields`` of the record
    at ``line`` (``record``), never from a guess; ``outcome`` is ``not_recorded`` where the
    log does not decide it.
    """

    outcome: Outcome
    because: str
    record: str  # the record kind the fields were read from ("failure": a text log's line)
    line: int  # its line in the log
    fields: tuple[str, ...]
    #: The type torch raised it as, where not ``fail_type`` (``InternalTorchDynamoError``).
    raised_as: str | None = None

    @property
    def headline(self) -> str:
        """A few words for a table cell."""
        return OUTCOME_WORDS[self.outcome]


OUTCOME_WORDS: dict[Outcome, str] = {
    "raised": "raised to the program",
    "eager": "frame ran eagerly",
    # suppress_errors=True: eager, but fullgraph=True (not logged) raises all the same
    "suppressed": "suppressed: the frame ran eagerly unless compiled with fullgraph=True",
    "limit": "no new version compiled",
    "not_recorded": "outcome not recorded",
}


def _failed_record(compile_: Compile) -> Metrics | None:
    for m in compile_.compilation_metrics:
        if m.fail_type:
            return m
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
        return FailureOutcome(
            "not_recorded",
            "the log does not record whether torch raised this error to the program or ran "
            "the frame eagerly (no compilation metrics name its settings).",
            "failure",
            failure.line,
            (),
        )
    fail_type = str(record.fail_type)
    data = record.data
    reason = str(data.get("fail_reason") or "")
    lowered = reason.lower()
    if fail_type in ALWAYS_RAISED:
        return FailureOutcome(
            "raised",
            f"torch raises {fail_type} to the program whatever suppress_errors says "
            f"(fail_type {fail_type}).",
            record.kind,
            record.line,
            ("fail_type",),
        )
    if fail_type in GRAPH_BREAK_TYPES or fail_type.endswith("Unsupported"):
        if any(w in lowered for w in _LIMIT_WORDS):
            return FailureOutcome(
                "limit",
                "the recompile limit was hit (fail_reason): torch compiles no new version of "
                "this function and runs it with the versions it has, or eagerly where none "
                "fits.",
                record.kind,
                record.line,
                ("fail_type", "fail_reason"),
            )
        eager_record = _eager_words(compile_)
        if eager_record is not None:
            kind, line = eager_record
            return FailureOutcome(
                "eager",
                "torch says it skipped the frame and fell back to eager for it "
                f"({kind}): the frame ran eagerly.",
                kind,
                line,
                ("fail_reason",) if kind == record.kind else (),
            )
        return FailureOutcome(
            "not_recorded",
            f"torch treats {fail_type} as a graph break it could not resume from: it raises "
            "it to the program under fullgraph=True, else runs the frame eagerly. The log "
            "does not record fullgraph, so it does not say which happened.",
            record.kind,
            record.line,
            ("fail_type",),
        )
    suppress = data.get("config_suppress_errors")
    wrapped = wrapped_as(fail_type)
    shown = fail_type
    if wrapped is not None:
        shown += f" (which torch wraps as {wrapped}, an error inside torch.compile)"
    if suppress is False:
        return FailureOutcome(
            "raised",
            f"suppress_errors was false and {shown} is not a graph break: torch raised "
            f"it to the program{f' as {wrapped}' if wrapped else ''}.",
            record.kind,
            record.line,
            ("fail_type", "config_suppress_errors"),
            wrapped,
        )
    if suppress is True:
        return FailureOutcome(
            "suppressed",
            f"suppress_errors was true: torch logged {shown} and ran the frame eagerly "
            "(unless the function was compiled with fullgraph=True, which the log does not "
            "record).",
            record.kind,
            record.line,
            ("fail_type", "config_suppress_errors"),
            wrapped,
        )
    return FailureOutcome(
        "not_recorded",
        "the log does not record suppress_errors for this compile, so it does not say "
        "whether torch raised the error to the program or ran the frame eagerly.",
        record.kind,
        record.line,
        ("fail_type",),
        wrapped,
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
            return m.kind, m.line
    for a in compile_.artifacts_named("dynamo_graph_break_reason"):
        text = a.text()[:20_000].lower() if a.payload is not None else ""
        if any(w in text for w in _EAGER_WORDS):
            return "dynamo_graph_break_reason", a.line
    return None
