"""How a failed compile ended, in words: the short outcome a table cell shows, and the
sentence a frame page gives for the rule of torch's that decided it
(:class:`~..trace.analyses.outcome.FailureOutcome`).  Where the log does not decide, the
sentence says so."""

from __future__ import annotations

from ..trace.analyses.outcome import FailureOutcome, Outcome, Refusal, Rule

#: A few words for a table cell.
OUTCOME_WORDS: dict[Outcome, str] = {
    "raised": "raised to the program",
    "eager": "frame ran eagerly",
    # suppress_errors=True: eager, but fullgraph=True (not logged) raises all the same
    "suppressed": "suppressed: the frame ran eagerly unless compiled with fullgraph=True",
    "limit": "no new version compiled",
    "not_recorded": "outcome not recorded",
}


def because(found: FailureOutcome) -> str:
    """Why the log says what it says of the outcome: one sentence from its rule and fields."""
    rule: Rule = found.rule
    fail_type = found.fail_type
    shown = fail_type
    if found.raised_as is not None:
        shown += f" (which torch wraps as {found.raised_as}, an error inside torch.compile)"
    raised_as = f" as {found.raised_as}" if found.raised_as else ""
    words: dict[Rule, str] = {
        "no_metrics": "the log does not record whether torch raised this error to the program "
        "or ran the frame eagerly (no compilation metrics name its settings).",
        "always_raised": f"torch raises {fail_type} to the program whatever suppress_errors "
        f"says (fail_type {fail_type}).",
        "recompile_limit": "the recompile limit was hit (fail_reason): torch compiles no new "
        "version of this function and runs it with the versions it has, or eagerly where "
        "none fits.",
        "torch_said_eager": "torch says it skipped the frame and fell back to eager for it "
        f"({found.record}): the frame ran eagerly.",
        "fullgraph_not_logged": f"torch treats {fail_type} as a graph break it could not "
        "resume from: it raises it to the program under fullgraph=True, else runs the frame "
        "eagerly. The log does not record fullgraph, so it does not say which happened.",
        "suppress_errors_false": f"suppress_errors was false and {shown} is not a graph "
        f"break: torch raised it to the program{raised_as}.",
        "suppress_errors_true": f"suppress_errors was true: torch logged {shown} and ran the "
        "frame eagerly (unless the function was compiled with fullgraph=True, which the log "
        "does not record).",
        "suppress_errors_not_logged": "the log does not record suppress_errors for this "
        "compile, so it does not say whether torch raised the error to the program or ran "
        "the frame eagerly.",
    }
    return words[rule]


#: Why torch made no new version (:func:`~..trace.analyses.outcome.refusal`), as a
#: sentence's start.
REFUSAL_WORDS: dict[Refusal, str] = {
    "limit": 'The recompile limit was hit (an Unsupported "recompile limit exceeded")',
    "limit_raised": "The recompile limit was hit under fullgraph=True or "
    "fail_on_recompile_limit_hit (FailOnRecompileLimitHit)",
    "error_on_recompile": "error_on_recompile was set (RecompileError)",
}


def refusal_outcome(kind: Refusal | str, outcome: Outcome | str) -> str:
    """What followed a refusal, as its record decides (:func:`.because`'s rules): the
    calls ran on with the versions torch had, or the error reached the program."""
    if kind == "limit":
        return "torch ran the versions it had, or the frame eagerly where none fit"
    if outcome == "raised":
        return "the error was raised to the program"
    if outcome == "suppressed":
        return "suppress_errors was true: the error was logged and the frame ran eagerly"
    return "the log does not record whether the error reached the program"
