"""What changed between two compiles of the same frame: the recompile a reader wants explained.

A recompile (``[0/1]`` after ``[0/0]``) happens because a guard of every cached
entry failed; the ``recompile_reasons`` artifact names the failed guard per
entry (``"0/0: tensor 'x' size mismatch ..."``).  Showing that guard next to a
diff of the two Dynamo graphs answers "why did this compile again, and what
did it produce differently?".  Pure functions of the model, no Sphinx.
"""

from __future__ import annotations

import difflib
import re

from ..model import Compile, Metrics, RankTrace
from .outcome import refusal

#: The graph compared between compiles: what Dynamo captured, before any backend ran.
DIFF_ARTIFACT = "dynamo_output_graph"

# `0/3: tensor 'x' ...` or `!0/1/2: ...`: the cache entry whose guard failed, then the guard.
_REASON_ENTRY = re.compile(r"^\s*(!?\d+/(?:\d+/)?\d+):\s?(.*)$", re.DOTALL)


def previous_compile(rank: RankTrace, compile_: Compile) -> Compile | None:
    """The compile this one replaced or came after, for the same frame; None for a first compile.

    * ``[x/n]`` with ``n > 0``: the closest earlier compile of frame ``x`` with a smaller
      ``n`` (its last attempt, the one that produced code), in log order; refused compiles
      (:func:`is_refused`) compiled nothing and are passed over.
    * ``[x/0_a] #k`` (the same id again after ``torch._dynamo.reset()``): the same attempt
      in occurrence ``k - 1``, when both compiled the same function (frame ids restart after a
      reset, so the same number may name another function).
    * Anything else (a first compile, a restarted attempt, ``[-/-]``): None.

    Only compiles of frame ``x`` are looked at (:meth:`RankTrace.same_function`), nearest
    first, so asking for every compile of a log stays near-linear.
    """
    cid = compile_.id
    if cid.frame_id is None or cid.frame_compile_id is None:
        return None
    group, position = rank.same_function(compile_)
    if position < 0:
        return None
    earlier = (group[i] for i in range(position - 1, -1, -1))
    same_frame = (c for c in earlier if c.id.frame_compile_id is not None)
    if cid.frame_compile_id > 0:
        for before in same_frame:
            if is_refused(before):
                continue  # torch compiled nothing there: the version before it is replaced
            before_fcid = before.id.frame_compile_id or 0
            if before_fcid < cid.frame_compile_id:
                return before
            if before_fcid == cid.frame_compile_id and before.occurrence != compile_.occurrence:
                return None  # reached the same id of an earlier occurrence: none in between
        return None
    if compile_.occurrence <= 1:
        return None
    for before in same_frame:
        if before.id == cid and before.occurrence == compile_.occurrence - 1:
            mine, theirs = _function_of(rank, compile_), _function_of(rank, before)
            if mine is not None and theirs is not None and mine != theirs:
                return None
            return before
    return None


def left_code(compile_: Compile) -> bool:
    """Whether a compile left code torch could run, guarded: no failure, and its metrics do
    not say ``has_guarded_code: false``.  A failed compile leaves no guards to fail."""
    if compile_.status == "error":
        return False
    return all(m.data.get("has_guarded_code") is not False for m in compile_.compilation_metrics)


def made_version(rank: RankTrace, compile_: Compile) -> bool:
    """The one definition of a version: a compile id (one occurrence, counted on its first
    attempt) whose compile produced guarded code torch can run again.

    Its attempts' compilation metrics decide: none failed and none says
    ``has_guarded_code: false``.  A refusal (:func:`is_refused`), a raised or suppressed
    error, made no version.  A text log (no metrics) decides from its failure lines.
    """
    if compile_.id.is_unknown:
        return False
    members = rank.attempts(compile_) or [compile_]
    if compile_ is not min(members, key=lambda c: c.id.attempt):
        return False  # one version per compile id: counted on its first attempt
    if any(is_refused(c) for c in members):
        return False
    metrics = [m for c in members for m in c.compilation_metrics]
    if not metrics:
        return not any(f.kind == "failure" for c in members for f in c.failures)
    if any(m.fail_type for m in metrics):
        return False
    return all(m.data.get("has_guarded_code") is not False for m in metrics)


def is_recompile(rank: RankTrace, compile_: Compile) -> bool:
    """The one definition of a recompile, every count and page uses it.

    A recompile is a new version (:func:`made_version`) of a function that had one: torch
    logged why (its ``recompile_reasons``: a guard of each cached version failed), or it is
    ``[x/n]``, ``n > 0`` (its first attempt), and the version it follows left guarded code
    (or is not in the log).  A compile after a version that failed is *compiled again*, not
    recompiled: the failed version left no guards, so no guard can have failed, and the log
    records no reason.  A refused compile (:func:`is_refused`) or one that failed made no
    new version: not a recompile.
    """
    if compile_.id.is_unknown or compile_.id.attempt or not made_version(rank, compile_):
        return False
    if compile_.recompile_reasons:
        return True
    if not (compile_.id.frame_compile_id or 0) > 0:
        return False
    previous = previous_compile(rank, compile_)
    return previous is None or left_code(previous)


def is_refused(compile_: Compile) -> bool:
    """The one definition of a refusal (:func:`.outcome.refusal`): past the recompile
    limit (run on, or raised under ``fullgraph``) or under ``error_on_recompile``, torch
    compiled nothing."""
    return refusal(compile_) is not None


def hit_limit(compile_: Compile) -> bool:
    """A compile torch refused past the recompile limit, whether the call then ran on or
    raised ``FailOnRecompileLimitHit``: no new version (its reasons are logged, but nothing
    was compiled)."""
    return refusal(compile_) in ("limit", "limit_raised")


def is_failed_recompile(rank: RankTrace, compile_: Compile) -> bool:
    """A later compile of a function (``[x/n]``, ``n > 0``, or one with recompile reasons;
    its first attempt) that failed for another reason than a refusal, and not after a
    failed version (that is :func:`is_compiled_again`): no new version, not a recompile.
    With :func:`is_recompile`, :func:`is_compiled_again` and :func:`is_refused`, every
    later compile is exactly one of the four."""
    if compile_.id.is_unknown or compile_.id.attempt:
        return False
    if not (compile_.recompile_reasons or (compile_.id.frame_compile_id or 0) > 0):
        return False
    if is_refused(compile_) or made_version(rank, compile_):
        return False
    return not is_compiled_again(rank, compile_)


def is_compiled_again(rank: RankTrace, compile_: Compile) -> bool:
    """``[x/n]``, ``n > 0`` (first attempt), after a version that failed, with no reason
    logged: torch compiled the function again; no guard failed, so no recompile."""
    if compile_.id.is_unknown or compile_.recompile_reasons or compile_.id.attempt:
        return False
    if is_refused(compile_):
        return False
    if not (compile_.id.frame_compile_id or 0) > 0:
        return False
    previous = previous_compile(rank, compile_)
    return previous is not None and not left_code(previous)


def next_compile(rank: RankTrace, compile_: Compile) -> Compile | None:
    """The first later compile whose :func:`previous_compile` is this one (its recompile)."""
    if compile_.id.frame_id is None:
        return None
    group, position = rank.same_function(compile_)
    if position < 0:
        return None
    for later in group[position + 1 :]:
        if previous_compile(rank, later) is compile_:
            return later
    return None


def graph_text(compile_: Compile) -> str | None:
    """The last Dynamo graph a compile logged, or None when it logged none."""
    graphs = [a for a in compile_.artifacts_named(DIFF_ARTIFACT) if a.payload is not None]
    return graphs[-1].text() if graphs else None


def graph_diff(a: Compile, b: Compile, context: int = 3) -> str:
    """A unified diff of the Dynamo graphs of ``a`` (before) and ``b`` (after).

    Empty when either has no Dynamo graph or the graphs are the same.  Trailing blanks are
    ignored, so only real changes show (shapes, inputs, specialized constants, ops).
    """
    before, after = graph_text(a), graph_text(b)
    if before is None or after is None:
        return ""
    lines = difflib.unified_diff(
        _normalised_lines(before),
        _normalised_lines(after),
        fromfile=f"{a.label} {DIFF_ARTIFACT}",
        tofile=f"{b.label} {DIFF_ARTIFACT}",
        n=context,
        lineterm="",
    )
    return "\n".join(lines)


def failed_guard(compile_: Compile, previous: Compile) -> str | None:
    """The guard of ``previous``'s cache entry that failed and caused ``compile_``.

    ``recompile_reasons`` lists one failed guard per cache entry, most recent first, each
    prefixed with that entry's id (``0/3: ...``); this picks the one of ``previous``.
    """
    wanted = _entry_key(previous)
    if wanted is None:
        return None
    for entry, reason in recompile_reason_entries(compile_):
        if entry == wanted:
            return reason
    return None


#: ``    - 1/0: tensor 'x' size mismatch ...``: a failed guard as ``RecompileError``'s message
#: (``error_on_recompile``) lists it, after "triggered by the following guard failure(s):".
_MESSAGE_GUARD = re.compile(r"^\s*-\s(!?\d+/(?:\d+/)?\d+:\s?.*)$")
_MESSAGE_HEAD = "triggered by the following guard failure"
#: Characters of a fail_reason read for the guard failures it lists.
_MESSAGE_CHARS = 200_000


def logged_reasons(compile_: Compile) -> list[str]:
    """The failed guards the log records for a compile: its ``recompile_reasons``, else the
    ones its own ``fail_reason`` lists (``error_on_recompile`` raises ``RecompileError``
    with them instead of logging ``recompile_reasons``).  [] where it records none."""
    if compile_.recompile_reasons:
        return [str(r) for r in compile_.recompile_reasons]
    record = _reasons_metrics(compile_)
    if record is None:
        return []
    text = str(record.data.get("fail_reason"))[:_MESSAGE_CHARS]
    lines = text.split(_MESSAGE_HEAD, 1)[1].splitlines()[1:]
    return [m.group(1) for line in lines if (m := _MESSAGE_GUARD.match(line))]


def reasons_record(compile_: Compile) -> tuple[str, int] | None:
    """(record, line) the failed guards of :func:`logged_reasons` are read from:
    ``recompile_reasons`` or ``compilation_metrics`` (its ``fail_reason``)."""
    records = compile_.artifacts_named("recompile_reasons")
    if compile_.recompile_reasons and records:
        return "recompile_reasons", records[0].line
    record = _reasons_metrics(compile_)
    if record is not None and logged_reasons(compile_):
        return f"{record.event} fail_reason", record.line
    return None


def _reasons_metrics(compile_: Compile) -> Metrics | None:
    for m in compile_.compilation_metrics:
        reason = m.data.get("fail_reason")
        if isinstance(reason, str) and _MESSAGE_HEAD in reason[:_MESSAGE_CHARS]:
            return m
    return None


def recompile_reason_entries(compile_: Compile) -> list[tuple[str | None, str]]:
    """The logged failed guards (:func:`logged_reasons`) split into (cache entry such as
    ``0/3`` or None, failed guard)."""
    out: list[tuple[str | None, str]] = []
    for reason in logged_reasons(compile_):
        text = str(reason)
        match = _REASON_ENTRY.match(text)
        if match is None:
            out.append((None, text.strip()))
        else:
            out.append((match.group(1), match.group(2).strip()))
    return out


def entry_compile(rank: RankTrace, compile_: Compile, entry: str) -> Compile | None:
    """The compile a cache entry of ``compile_``'s recompile reasons names (``0/2``): the
    latest compile with that id logged before ``compile_``.  After ``torch._dynamo.reset()``
    an id names two compiles (``[0/2]`` of one function, ``[0/2] #2`` of the next): the
    entries torch checked are the ones of the current run, the latest before it."""
    found: Compile | None = None
    for c in rank.compiles:
        if c.first_line >= compile_.first_line:
            break
        if not c.id.attempt and _entry_key(c) == entry:
            found = c
    return found


def _entry_key(compile_: Compile) -> str | None:
    """How torch names a cache entry in recompile reasons: ``0/3`` (``!1/0/3`` for autograd)."""
    cid = compile_.id
    if cid.frame_id is None or cid.frame_compile_id is None:
        return None
    key = f"{cid.frame_id}/{cid.frame_compile_id}"
    if cid.compiled_autograd_id is not None:
        key = f"!{cid.compiled_autograd_id}/{key}"
    return key


def _function_of(rank: RankTrace, compile_: Compile) -> tuple[str, str] | None:
    """(file, function name) compiled, from any attempt's metrics, else the start stack."""
    siblings = rank.attempts(compile_)
    for c in [compile_, *siblings]:
        for m in c.compilation_metrics:
            name, filename = m.data.get("co_name"), m.data.get("co_filename")
            if isinstance(name, str) and isinstance(filename, str):
                return filename, name
    for c in [compile_, *siblings]:
        if c.stack:
            last = c.stack[-1]
            return last.filename, last.name
    return None


_NO_DIGITS = str.maketrans("", "", "0123456789")


def differ_only_in_numbers(old: str, new: str) -> bool:
    """Whether two texts are the same once their digits are left out: the graphs of a
    recompile for new input shapes (sizes, strides, integer constants).  Linear, in C:
    graphs of a big trace run to hundreds of kilobytes, and most of their lines change."""
    return old.translate(_NO_DIGITS) == new.translate(_NO_DIGITS)


def sizes_only_changes(old: list[str], new: list[str]) -> int | None:
    """How many lines differ between two texts, line for line, that differ only in their
    numbers (:func:`differ_only_in_numbers`); None when they differ otherwise (another op,
    another line count)."""
    if len(old) != len(new) or not differ_only_in_numbers("\n".join(old), "\n".join(new)):
        return None
    return sum(1 for a, b in zip(old, new, strict=True) if a != b)


def _normalised_lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
