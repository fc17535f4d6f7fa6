"""Every claim a page makes is the word of a record it can point to, on every corpus log.

Links and numbers are checked elsewhere (``test_site_invariants``); this checks what the
sentences say:

- an outcome after a failure (raised to the program, ran eagerly, no new version past the
  recompile limit) is stated only where the record it names, at the line it names, holds
  the fields that decide it; where no record decides, the page says the log does not say;
- the programs' own output (``program-output.txt``: what they caught, what returned) never
  contradicts an outcome the pages state;
- a recompile is counted, and a frame page says a guard did not fit, only where torch
  logged a reason or the version before left guarded code;
- the directive, the glance, the failures table, ``summary`` and the ranks table say the
  same counts, and an ``ok`` compile that logged a graph break is never plain ``ok``.

Marked ``corpus``: run by ``nox -s tests`` and CI on every corpus log.
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, get_args

import pytest

from sphinx_torchtrace.site.outcome_words import OUTCOME_WORDS, because
from sphinx_torchtrace.site.pages.frame import frame_page
from sphinx_torchtrace.site.plan import PageSettings, TracePlan, plan_trace
from sphinx_torchtrace.trace import Compile, Trace, load_trace
from sphinx_torchtrace.trace.analyses import compare
from sphinx_torchtrace.trace.analyses.failures import failure_groups
from sphinx_torchtrace.trace.analyses.glance import rank_rows, triage
from sphinx_torchtrace.trace.analyses.graph_breaks import break_counts
from sphinx_torchtrace.trace.analyses.naming import compiled_function, function_label
from sphinx_torchtrace.trace.analyses.outcome import (
    ALWAYS_RAISED,
    INTERNAL,
    RULES,
    FailureOutcome,
    Outcome,
    failure_outcome,
)
from sphinx_torchtrace.trace.analyses.recompiles import recompiled_functions
from sphinx_torchtrace.trace.reader import record_lines

from .conftest import DATA, SHARED
from .test_site_invariants import corpus_traces

pytestmark = pytest.mark.corpus

#: Frame pages are built (without Sphinx) for the logs up to this size: the claims are the
#: same sentences on a big log, and the model-level checks cover every log.
PAGE_BYTES = 4_000_000
#: torch's own words for running a frame eagerly after a failure it could not resume from.
EAGER_WORDS = ("frame skipped", "fall back to eager", "falling back to eager")
#: Errors torch raises from a compile (a program's own ValueError is raised by eager code).
TORCH_ERRORS = frozenset(
    {
        "BackendCompilerFailed",
        "TorchRuntimeError",
        "InternalTorchDynamoError",
        "Unsupported",
        "UncapturedHigherOrderOpError",
        "UserError",
        "InductorError",
        "FailOnRecompileLimitHit",
    }
)
EVENT = re.compile(r"^EVENT (\S+) ")  # then key=value fields: fn=, exc=, mode= ...


def _inputs() -> list[str]:
    shared = [
        p.relative_to(DATA).as_posix()
        for p in sorted(SHARED.iterdir())
        if p.is_dir() and p.name != "tlparse-inputs" and any(p.glob("*.log"))
    ]
    return corpus_traces() + shared


@cache
def _trace(rel: str) -> Trace:
    return load_trace(DATA / rel)


def _size(rel: str) -> int:
    path = DATA / rel
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files)


def _compiles(trace: Trace) -> Iterator[tuple[Any, Compile]]:
    for rank in trace.ranks:
        for c in rank.compiles:
            if not c.id.is_unknown:
                yield rank, c


def _record(rank: Any, line: int) -> dict[str, Any]:
    """The JSON envelope of the record at ``line`` of the rank's log, read from the file
    (the line whole: ``sphinx-torchtrace show`` cuts long lines for a terminal)."""
    path = _log_path(rank)
    opened = (
        gzip.open(path, "rt", encoding="utf-8")
        if path.suffix == ".gz"
        else open(  # noqa: SIM115
            path, encoding="utf-8"
        )
    )
    with opened as f:
        text = next(itertools.islice(f, line - 1, None))
    assert record_lines(path, line, max_payload=0)[0][:200] == text[:200]  # what show prints
    return json.loads(text[text.index("{") :])


def _log_path(rank: Any) -> Path:
    path = Path(rank.path)
    return path if path.is_absolute() else Path.cwd() / path


@pytest.mark.parametrize("rel", _inputs())
def test_an_outcome_is_the_word_of_the_record_it_names(rel: str) -> None:
    for rank, c in _compiles(_trace(rel)):
        found = failure_outcome(c)
        if found is None:
            assert c.status != "error" or rank.source == "torch_logs", (rel, c.label)
            continue
        if found.record == "failure":
            assert found.outcome == "not_recorded", (rel, c.label)
            continue
        if found.record == "dynamo_graph_break_reason":  # torch's words, in its payload
            assert found.outcome == "eager", (rel, c.label)
            text = "\n".join(record_lines(_log_path(rank), found.line, 10_000)).lower()
            assert '"name": "dynamo_graph_break_reason"' in text, (rel, c.label)
            assert any(w in text for w in EAGER_WORDS), (rel, c.label)
            continue
        data = _record(rank, found.line)[found.record]  # the very record, from the file
        fail_type = data.get("fail_type")
        assert fail_type, (rel, c.label, found)
        assert set(found.fields) <= set(data), (rel, c.label, found.fields)
        reason = str(data.get("fail_reason") or "").lower()
        if found.outcome == "raised":
            assert data.get("config_suppress_errors") is False or fail_type in ALWAYS_RAISED, (
                rel,
                c.label,
            )
        elif found.outcome == "suppressed":
            assert data.get("config_suppress_errors") is True, (rel, c.label)
        elif found.outcome == "eager":
            said = json.dumps(data).lower()  # the record's own words
            assert data.get("config_suppress_errors") is True or any(
                w in said for w in EAGER_WORDS
            ), (rel, c.label)
        elif found.outcome == "limit":
            assert "recompile limit" in reason or "cache limit" in reason, (rel, c.label)
        else:
            assert "does not" in because(found), (rel, c.label)  # says the log does not say


def _program_events(rel: str) -> dict[str, list[tuple[str, str | None]]]:
    """``fn -> [(what, exception)]`` from a capture program's own output."""
    out = DATA / rel
    out = (out if out.is_dir() else out.parent) / "program-output.txt"
    events: dict[str, list[tuple[str, str | None]]] = {}
    if out.is_file():
        for line in out.read_text(encoding="utf-8").splitlines():
            match = EVENT.match(line)
            if match:
                fields = dict(f.split("=", 1) for f in line.split()[2:] if "=" in f)
                events.setdefault(fields.get("fn", ""), []).append(
                    (match.group(1), fields.get("exc"))
                )
    return events


def _caught_failures(rel: str) -> bool:
    """Whether the capture program caught an error of a compiled call (or saw eager's own)."""
    return any(
        what.startswith("raised") for seen in _program_events(rel).values() for what, _ in seen
    )


@pytest.mark.parametrize("rel", [r for r in _inputs() if _caught_failures(r)])
def test_no_outcome_contradicts_what_the_program_saw(rel: str) -> None:
    events = _program_events(rel)
    checked = 0
    for rank, c in _compiles(_trace(rel)):
        found = failure_outcome(c)
        name, _ = compiled_function(rank, c)
        seen = events.get(name or "")
        if found is None or not seen:
            continue
        first, caught = seen[0]  # the call whose compile failed
        if found.outcome == "raised":  # the program caught torch's error, no value
            assert first == "raised" and caught in TORCH_ERRORS, (rel, c.label, seen)
        if found.outcome in ("eager", "suppressed"):  # it ran: a value, or its own error
            assert first in ("ok", "raised-eager") or (
                first == "raised" and caught not in TORCH_ERRORS
            ), (rel, c.label, seen)
        checked += 1
    assert checked, rel


@pytest.mark.parametrize("rel", _inputs())
def test_a_recompile_is_counted_only_where_the_log_shows_one(rel: str) -> None:
    trace = _trace(rel)
    for rank in trace.ranks:
        functions = recompiled_functions(rank)
        counted = {id(r.compile) for fn in functions for r in fn.recompiles}
        # a version whose guard failed is a version of the same function, logged before
        # (after a reset, [0/2] of the function before is not this one's [0/2] #2)
        for fn in functions:
            for r in fn.recompiles:
                for g in r.reasons:
                    if g.previous is not None:
                        assert g.previous.first_line < r.compile.first_line, (rel, g)
                        mine = compiled_function(rank, r.compile)[0]
                        theirs = compiled_function(rank, g.previous)[0]
                        assert mine == theirs, (rel, r.compile.label, g.previous_label)
        for c in rank.compiles:
            if id(c) not in counted:
                continue
            previous = compare.previous_compile(rank, c)
            assert c.recompile_reasons or previous is None or compare.left_code(previous), (
                rel,
                c.label,
                "counted after a failed version, with no reason logged",
            )
        # every later version's first attempt is one or the other, never both, never neither
        for c in rank.compiles:
            later = (c.id.frame_compile_id or 0) > 0 and not c.id.attempt
            if later and not c.id.is_unknown:
                kinds = [
                    compare.is_recompile(rank, c),
                    compare.is_compiled_again(rank, c),
                    compare.is_refused(c),  # past the limit or error_on_recompile: no version
                    compare.is_failed_recompile(rank, c),  # failed otherwise: no version
                ]
                assert kinds.count(True) == 1, (rel, c.label, kinds)
    t = triage(trace)
    assert not any(compare.hit_limit(r.compile) for fn in t.recompiled for r in fn.recompiles)
    assert t.compiled_again == sum(
        compare.is_compiled_again(r, c) for r in trace.ranks for c in r.compiles
    )


@cache
def _plan(rel: str) -> TracePlan:
    return plan_trace("t", _trace(rel), "torchtrace", fold_bytes=0)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            yield from _strings(getattr(value, name))


@pytest.mark.parametrize("rel", [r for r in _inputs() if _size(r) <= PAGE_BYTES])
def test_frame_pages_state_only_what_their_records_show(rel: str) -> None:
    plan = _plan(rel)
    settings = PageSettings()
    for frame in plan.frames:
        c = frame.compile
        if c.id.is_unknown or frame.same_as is not None:
            continue
        status = frame_page(plan, frame, settings).blocks[2]  # the status paragraph
        said = "".join(_strings(status))
        found = failure_outcome(c)
        outcome = found.outcome if found else None
        eager_words = ("runs eagerly", "ran the frame eagerly", "fell back to eager")
        assert any(w in said for w in eager_words) == (outcome in ("eager", "suppressed")), (
            rel,
            c.label,
            said,
        )
        raised_words = ("raised it to the program", "whatever suppress_errors says")
        assert any(w in said for w in raised_words) == (outcome == "raised"), (rel, c.label, said)
        if found is not None:  # the record it names, by kind and line
            assert f"line {found.line} of the log" in said, (rel, c.label, said)
        breaks = sum(f.kind == "graph_break" for f in c.failures)
        if c.status == "ok" and breaks:
            assert "graph break" in said, (rel, c.label, said)
        page = frame_page(plan, frame, settings)
        text = " ".join(_strings(page.blocks))
        assert "whose guards did not fit" not in text, (rel, c.label)
        if "did not fit the new inputs; the guard that failed" in text:
            assert c.recompile_reasons, (rel, c.label)


@pytest.mark.parametrize("rel", _inputs())
def test_every_surface_says_the_same_counts(rel: str) -> None:
    trace = _trace(rel)
    t = triage(trace)
    groups = [g for r in trace.ranks for g in failure_groups(r.compiles)]
    counts = break_counts(groups)
    assert (t.graph_breaks, t.graph_break_types, t.graph_break_reasons) == (
        counts.graph_breaks,
        counts.break_types,
        counts.distinct_breaks,
    )
    assert (t.errors, t.error_types, t.distinct_errors) == (
        counts.errors,
        counts.error_types,
        counts.distinct_errors,
    )
    assert t.graph_break_types <= t.graph_break_reasons <= max(t.graph_breaks, 0) or (
        not t.graph_breaks
    )
    assert sum(t.statuses.values()) == t.compile_ids
    assert t.ok_with_breaks <= t.statuses.get("ok", 0)
    rows = rank_rows(trace)
    assert sum(sum(r.statuses.values()) for r in rows) == t.compile_ids, rel
    # a recompile is what recompiled_functions lists, on the glance and the overview
    assert t.recompiles == sum(len(fn.recompiles) for fn in t.recompiled)


def test_a_failed_compile_compiled_again_is_no_recompile_and_its_page_says_so() -> None:
    """``retry_matmul`` failed at ``[11/0]`` (raised to the program) and compiled at
    ``[11/1]`` on its next call: no guard failed and torch logged no reason.  The glance
    said "Compiled after [11/0], whose guards did not fit" and counted a recompile."""
    rel = "corpus/failures_raised_suppressed/dedicated_log_torch_trace_345bxx1q.log"
    trace = _trace(rel)
    t = triage(trace)
    assert (t.recompiles, t.compiled_again) == (0, 1)
    plan = _plan(rel)
    frame = next(f for f in plan.frames if f.compile.label == "[11/1]")
    text = " ".join(_strings(frame_page(plan, frame, PageSettings()).blocks))
    assert "Compiled again after " in text and "and left no compiled code" in text
    assert "which failed (its compilation_metrics, line " in text  # the record that shows it
    assert "The log records no reason for this compile." in text
    failed = next(f for f in plan.frames if f.compile.label == "[11/0]")
    said = " ".join(_strings(frame_page(plan, failed, PageSettings()).blocks[2]))
    assert "Raised to the program:" in said and "line " in said


def test_a_failure_in_torch_code_is_placed_at_the_user_s_line_first() -> None:
    """A buggy scan carry: torch names its own ``scan.py`` line; the user's line (78, the
    call of ``scan``) is in torch's "from user code" stack, and comes first."""
    trace = _trace("corpus/scan_errors/dedicated_log_torch_trace_7n_0euuv.log")
    rows = {
        tuple(c.label for c in g.compiles): g
        for g in failure_groups(trace.ranks[0].compiles)
        if g.category == "error"
    }
    scan = rows[("[4/0]", "[5/0]")]  # compiled by the user, then by torch's own scan frame
    assert scan.location is not None and scan.location.endswith("/scan_errors.py:78")
    in_torch = scan.events[0].torch_location
    assert in_torch is not None and "torch/_higher_order_ops/scan.py" in in_torch


def test_names_that_repeat_are_told_apart_by_their_place() -> None:
    """156 small frames: two ``inner`` closures and two ``forward`` methods were alike
    titles, and a hundred ``<lambda>`` rows had no line."""
    trace = _trace("corpus/many_lambdas/dedicated_log_torch_trace_5x_1w1ey.log.gz")
    rank = trace.ranks[0]
    titles = {function_label(rank, c) for c in rank.compiles if not c.id.is_unknown}
    assert {
        "inner many_lambdas.py:221",
        "inner many_lambdas.py:227",
        "forward many_lambdas.py:238",
        "forward many_lambdas.py:243",
    } <= titles
    assert "inner" not in titles and "forward" not in titles and "<lambda>" not in titles
    # past the recompile limit torch logs no code name: the version before names it
    limit = _trace("corpus/decode_recompile_limit/dedicated_log_torch_trace_dke2he39.log")
    hit = next(c for c in limit.ranks[0].compiles if c.label == "[0/4]")
    assert compiled_function(limit.ranks[0], hit)[0] == "decode_step"


@pytest.mark.parametrize("rel", [r for r in _inputs() if _size(r) <= PAGE_BYTES])
def test_no_gpu_or_remote_cache_words_where_the_run_had_none(rel: str) -> None:
    """torch names some timers after Triton and remote caches on every run; a CPU compile's
    page shows the key, not "Triton compile time" as a fact."""
    plan = _plan(rel)
    for frame in plan.frames:
        if frame.compile.id.is_unknown or frame.same_as is not None:
            continue
        if any(k.kernel.kind == "triton" for k in frame.kernels):
            continue
        text = " ".join(_strings(frame_page(plan, frame, PageSettings()).blocks))
        assert "(Triton compile time)" not in text, (rel, frame.compile.label)
        assert "(Time saved by the remote cache)" not in text, (rel, frame.compile.label)


def test_compiles_after_a_reset_are_listed_with_their_run() -> None:
    """After ``torch._dynamo.reset()`` f compiled ``[0/0] #2`` .. ``[0/2] #2`` then
    ``[0/3]`` .. ``[0/6]`` (first of their ids): the directory and previous/next put
    ``[0/3]`` right after dtype_fn's ``[0/2]``, and f's first versions at the end."""
    plan = _plan("corpus/recompile_limit/dedicated_log_torch_trace_v_0dxap5.log.gz")
    order = [f.compile.label for f in plan.frames]
    assert order.index("[0/2] #2") < order.index("[0/3]")
    assert order.index("[1/1]") < order.index("[0/0] #2")  # const_fn ran before the reset


def test_a_restart_with_no_graph_break_is_no_graph_break() -> None:
    """``backends``: after a reset, ``[0/0]`` restarted for
    ``TensorifyScalarRestartAnalysis`` (its restart reason names only that class; the log
    has no graph-break record): the glance said "1 graph break" and the page "the frame is
    split there"."""
    trace = _trace("corpus/backends/dedicated_log_torch_trace_vgzg528h.log.gz")
    t = triage(trace)
    assert (t.graph_breaks, t.restarts) == (0, 1)
    (row,) = [g for g in failure_groups(trace.ranks[0].compiles)]
    assert row.category == "restart" and "TensorifyScalarRestartAnalysis" in row.message.text


def test_every_rule_and_outcome_has_words() -> None:
    # the model names the rule that decided; the page says it, and where the log does not
    # decide, the sentence says the log does not say
    assert set(OUTCOME_WORDS) == set(get_args(Outcome))
    for rule in RULES:
        found = FailureOutcome("not_recorded", rule, "compilation_metrics", 7, (), "KeyError")
        said = because(found)
        assert said.endswith(".") and "{" not in said, rule
        if rule in ("no_metrics", "fullgraph_not_logged", "suppress_errors_not_logged"):
            assert "does not" in said, rule
    wrapped = FailureOutcome(
        "raised", "suppress_errors_false", "compilation_metrics", 7, (), "KeyError", INTERNAL
    )
    assert because(wrapped) == (
        "suppress_errors was false and KeyError (which torch wraps as InternalTorchDynamoError, "
        "an error inside torch.compile) is not a graph break: torch raised it to the program "
        "as InternalTorchDynamoError."
    )
