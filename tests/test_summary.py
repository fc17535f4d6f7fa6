"""The overview page's figures (``trace/analyses/``: glance, naming, settings,
recompiles, caches, phases, chromium, divergence, export ...) on real logs, as a reader
sees them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sphinx_torchtrace.site.guard_words import GUARD_WORDS, guard_words
from sphinx_torchtrace.site.phase_words import PHASE_WORDS, phase_words
from sphinx_torchtrace.site.rank_group_words import rank_group_words
from sphinx_torchtrace.site.source import strip_source
from sphinx_torchtrace.trace import CompileId, load_trace
from sphinx_torchtrace.trace.analyses import timings
from sphinx_torchtrace.trace.analyses.caches import cache_table, cache_text, cache_totals
from sphinx_torchtrace.trace.analyses.chromium import chromium_events_json
from sphinx_torchtrace.trace.analyses.divergence import divergence
from sphinx_torchtrace.trace.analyses.export import (
    export_issues,
    exported_programs,
    unbacked_symbols,
)
from sphinx_torchtrace.trace.analyses.failures import failure_groups, reason_headline
from sphinx_torchtrace.trace.analyses.glance import rank_rows, triage
from sphinx_torchtrace.trace.analyses.guards import GUARD_KIND_NAMES, guard_kind
from sphinx_torchtrace.trace.analyses.naming import function_name
from sphinx_torchtrace.trace.analyses.phases import (
    TIME_PHASES,
    chromium_phase_times,
    compile_seconds,
    time_totals,
)
from sphinx_torchtrace.trace.analyses.rank_groups import CacheLookups
from sphinx_torchtrace.trace.analyses.recompiles import recompiled_functions
from sphinx_torchtrace.trace.analyses.run_info import capture_span
from sphinx_torchtrace.trace.analyses.settings import (
    compile_config,
    compile_configs,
    config_json,
    config_runs,
    notable_settings,
    recompile_limits,
)
from sphinx_torchtrace.trace.analyses.stack_trie import trie_lines
from sphinx_torchtrace.trace.model import Compile, Failure, Metrics, RankTrace, Trace

DATA = Path(__file__).parent / "data"
SHARED = DATA / "shared"
INPUTS = SHARED / "tlparse-inputs" / "inputs"


def _rank(path: Path) -> RankTrace:
    return load_trace(path).ranks[0]


def _labels(compiles: list[Compile]) -> list[str]:
    return [c.label for c in compiles]


# -- failures and restarts ------------------------------------------------------------------


def test_graph_breaks_are_grouped_by_break_and_place_not_repeated() -> None:
    rank = _rank(SHARED / "graph_breaks")
    groups = failure_groups(rank.compiles)
    # the restart torch logs after each break is the same event, once; one row per
    # (registry id, user location)
    assert [g.category for g in groups] == ["graph_break"] * 5
    assert sum(g.count for g in groups) == 11  # 11 breaks, not 11 more restarts
    explicit = [g for g in groups if g.key == ("GB0025",)]
    assert [(g.location, _labels(g.compiles)) for g in explicit] == [
        ("/home/user/project/graph_breaks.py:11", ["[2/0]", "[3/0]", "[2/0] #2", "[3/0] #2"]),
        ("/home/user/project/graph_breaks.py:19", ["[1/0]", "[1/0] #2"]),
    ]
    (part,) = explicit[0].message.parts
    assert part.type == "Call to `torch._dynamo.graph_break()`"
    assert part.explanation and part.explanation.startswith("User-inserted graph break")
    assert part.url and part.url.endswith("/gb0025.html")
    printed = next(g for g in groups if g.message.headline == "Failed to trace builtin operator")
    assert printed.location == "/home/user/project/graph_breaks.py:17"
    assert printed.key == ("GB0059",)
    assert all(len(p.hints) == len(set(p.hints)) for g in groups for p in g.message.parts)


def test_compile_errors_come_first_with_their_exception_type() -> None:
    rank = _rank(SHARED / "compile_error")
    groups = failure_groups(rank.compiles)
    assert [g.category for g in groups] == ["error"] * 6 + ["graph_break"]
    failing = groups[0]
    assert failing.type == "BackendCompilerFailed"
    assert failing.message.headline == (
        "backend='failing_backend' raised: "
        "RuntimeError: intentional failure in custom backend 'failing_backend'"
    )
    # The script raised case 1 to its caller and suppressed the same failure after reset():
    # one error, two outcomes, two rows (each compile's suppress_errors says which).
    assert _labels(failing.compiles) == ["[0/0]"] and failing.outcome == "raised"
    suppressed = groups[1]
    assert suppressed.message.key == failing.message.key
    assert _labels(suppressed.compiles) == ["[0/0] #2"] and suppressed.outcome == "suppressed"
    types = sorted(g.type or "" for g in groups if g.category == "error")
    assert types == [
        "BackendCompilerFailed",
        "BackendCompilerFailed",
        "BackendCompilerFailed",
        "InductorError",
        "TorchRuntimeError",
        "Unsupported",
    ]
    # fullgraph=True is not logged: a raised Unsupported is not called a fallback
    assert next(g for g in groups if g.type == "Unsupported").outcome == "not_recorded"
    fake = next(g for g in groups if g.type == "TorchRuntimeError")
    assert fake.location == "/home/user/project/compile_error.py:53"


@pytest.mark.parametrize(
    ("reason", "headline"),
    [
        (
            "Graph break in user code at a.py:3\nGraph Break Reason: Encountered graph break "
            "when attempting to trace CALL:\n\nUnsupported method call\n  Explanation: x",
            "Unsupported method call",
        ),
        ("backend='b' raised:\nRuntimeError: boom", "backend='b' raised: RuntimeError: boom"),
        (
            "'skip function graph_break in file decorators.py'",
            "'skip function graph_break in file decorators.py'",
        ),
        ("", "(no reason logged)"),
        ("   \n\n", "(no reason logged)"),
    ],
)
def test_reason_headline(reason: str, headline: str) -> None:
    assert reason_headline(reason) == headline


# -- recompiles -----------------------------------------------------------------------------


def test_recompiles_are_explained_per_function() -> None:
    rank = _rank(SHARED / "recompiles")
    functions = recompiled_functions(rank)
    assert [(f.function, f.frame_label, f.versions) for f in functions] == [
        ("static_fn", "[0/*]", 5),
        ("auto_fn", "[1/*]", 6),
        ("limited_fn", "[2/*]", 3),  # [2/3] was refused past the limit: no version
    ]
    static = functions[0]
    assert _labels([r.compile for r in static.recompiles]) == ["[0/1]", "[0/2]", "[0/3]", "[0/4]"]
    first = static.recompiles[0].reasons
    assert [(g.previous_label, g.guard) for g in first] == [
        ("[0/0]", "tensor 'x' size mismatch at index 0. expected 4, actual 8"),
    ]
    assert first[0].previous is rank.compile("[0/0]")
    assert first[0].kind == "shape"
    assert guard_words(first[0].kind) == "an input tensor has a different shape"
    dtype = static.recompiles[2].reasons[0]
    assert guard_words(dtype.kind) == "an input tensor has a different data type (dtype)"
    # a guard on a Python value: torch's trailing "# source line" comment is dropped
    scale = functions[1].recompiles[2].reasons[0]
    assert scale.guard == "scale == 2.0"
    assert "specialized" in guard_words(scale.kind)


def test_explanations_never_quote_trace_text() -> None:
    assert guard_kind("`evil` ___check_obj_id(L['m'], 123)") == "object"
    assert guard_words("object") == "a different Python object was passed"
    assert guard_kind("something torch invents next year") == "other"
    assert "guard" in guard_words("other") and guard_words("from a newer model") == (
        guard_words("other")
    )


def test_every_phase_has_words() -> None:
    """The model sums each phase under a key; the pages name each (a phase without words
    would show its key)."""
    assert [phase.key for phase in TIME_PHASES] == list(PHASE_WORDS)
    assert phase_words("from a newer model") == "from a newer model"


def test_every_kind_of_guard_has_words() -> None:
    """The model tells kinds apart; the pages say each: a kind without words would read as
    the general sentence, and words without a kind are dead."""
    assert set(GUARD_KIND_NAMES) == set(GUARD_WORDS)


# -- header ---------------------------------------------------------------------------------


def test_capture_span_and_settings_changed_by_the_user() -> None:
    trace = load_trace(SHARED / "recompiles")
    span = capture_span(trace.ranks)
    assert span is not None and span.start is not None
    assert span.start.strftime("%m-%d %H:%M:%S.%f") == "11-21 11:52:03.815000"
    assert span.seconds is not None and 28 < span.seconds < 29
    settings = {(s.config, s.key): s.values for s in notable_settings(compile_configs(trace))}
    assert settings[("dynamo", "recompile_limit")] == ["8", "3"]  # lowered mid-run by the script
    training = load_trace(SHARED / "training")
    assert notable_settings(compile_configs(training)) == []
    config = compile_config(training)
    assert set(config) == {"dynamo_config", "inductor_config"}
    assert json.loads(config_json(config))["dynamo_config"]["recompile_limit"] == 8


# -- stack trie, directory, cache -----------------------------------------------------------


def test_trie_lines_hold_every_started_compile_once() -> None:
    rank = _rank(SHARED / "graph_breaks")
    lines = trie_lines(rank.stack_trie)
    placed = [c for line in lines for c in line.compiles]
    assert len(placed) == len({id(c) for c in placed})
    assert {c.label for c in placed} >= {"[0/0]", "[8/0]", "[0/0] #2", "[6/0] #2"}
    assert lines[0].depth == 0
    # pre-order: a line is at most one level deeper than the line before it
    assert all(b.depth <= a.depth + 1 for a, b in zip(lines, lines[1:], strict=False))


def test_directory_figures() -> None:
    rank = _rank(SHARED / "compile_error")
    restarted = rank.compile("[3/0]")
    assert function_name(restarted) == "f5"  # no metrics: named from its stack
    assert compile_seconds(restarted) is None
    assert cache_text(rank.compile("[5/0]")) == "2 miss"
    assert cache_text(rank.compile("[8/0]")) == "1 bypass"
    caches, rows = cache_table(rank.compiles)
    assert caches == ["aotautograd", "fx_graph"]
    assert _labels([r.compile for r in rows]) == ["[3/0_1]", "[5/0]", "[6/0]", "[8/0]"]
    assert cache_totals(rank.compiles) == {"miss": 6, "bypass": 1}


# -- compile time ---------------------------------------------------------------------------


def test_time_totals_sum_the_logged_metrics() -> None:
    rank = _rank(SHARED / "compile_error")
    totals = {t.phase: t for t in time_totals(rank.compiles)}
    whole = totals["entire_frame"]
    logged = [
        m.data["entire_frame_compile_time_s"]
        for c in rank.compiles
        for m in c.compilation_metrics
        if m.data.get("entire_frame_compile_time_s") is not None
    ]
    assert whole.compiles == len(logged) == 10
    assert whole.seconds == pytest.approx(sum(logged))
    assert whole.slowest is rank.compile("[3/0_1]")
    assert whole.slowest_seconds == pytest.approx(max(logged))
    # nested phases never exceed the phase that contains them
    codegen, inductor = totals["code_gen"], totals["inductor"]
    assert codegen.seconds <= inductor.seconds <= whole.seconds
    training = _rank(SHARED / "training")
    phases = {t.phase for t in time_totals(training.compiles)}
    assert "backward_inductor" in phases
    assert phase_words("backward_inductor") == "Backward: Inductor (inductor_compile_time_s)"


def test_chromium_timers() -> None:
    rank = _rank(SHARED / "training")
    timers = chromium_phase_times(rank, limit=5)
    assert len(timers) == 5
    assert timers == sorted(timers, key=lambda t: -t.seconds)
    by_name = {t.name: t for t in timers}
    assert by_name["dynamo"].count == 5  # one per compiled frame
    # the backward graph is compiled by Inductor outside any Dynamo frame: 3 Inductor runs
    assert by_name["inductor_compile"].count == 3


# -- chromium events ------------------------------------------------------------------------


def test_chromium_events_json_is_valid_with_every_event() -> None:
    rank = _rank(SHARED / "training")
    events = json.loads(chromium_events_json(rank))
    assert isinstance(events, list)
    assert len(events) == len(rank.chromium_events) == 355
    assert events[0]["name"] == "dynamo" and events[0]["ph"] == "B"


def test_writing_the_events_times_the_phases_as_reading_them_does() -> None:
    """The download and the overview's timers read each event once between them: the
    timers the download counted are the ones a fresh reading gives."""
    fresh = chromium_phase_times(_rank(SHARED / "training"), limit=100)
    rank = _rank(SHARED / "training")
    chromium_events_json(rank)
    assert timings.phase_times_of(rank) is not None  # counted while writing
    assert chromium_phase_times(rank, limit=100) == fresh
    assert chromium_phase_times(rank, limit=3) == fresh[:3]
    assert fresh and {t.name for t in fresh} >= {"dynamo", "inductor_compile"}


def test_the_stage_chart_and_the_timers_read_the_events_once() -> None:
    """The overview's chart of stages and its table of torch's timers come from one reading
    of the events: the chart's reading counts the timers, the same as a reading of its own."""
    fresh = chromium_phase_times(_rank(SHARED / "training"), limit=100)
    rank = _rank(SHARED / "training")
    assert timings.compile_time_rows(rank)
    assert timings.phase_times_of(rank) == fresh


def test_the_timeline_download_reads_the_events_for_the_chart_and_the_timers_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The timeline download is written before the overview is made: its reading of the
    events gives the overview's chart and timers what a reading of their own gives (on
    logs with stages, with corrupted events, with compiled autograd), and after it the
    overview reads nothing again."""
    logs = [
        SHARED / "training",
        INPUTS / "simple_corrupted_json.log",
        DATA / "captured" / "compiled_autograd",
        DATA / "corpus" / "explain",
        DATA / "corpus" / "cache" / "warm",
        INPUTS / "multi_rank_logs",
    ]
    for path in logs:
        rank = _rank(path)
        chromium_events_json(rank)
        spans, timers = timings._cache[id(rank)][1], timings.phase_times_of(rank)
        timings._cache.clear()
        assert timings.read_events(rank) == spans, path
        assert timings.phase_times_of(rank) == timers, path
        assert spans or path.name == "simple_corrupted_json.log", path  # stages were read
    rank = _rank(SHARED / "training")
    chromium_events_json(rank)
    monkeypatch.setattr(timings, "_parsed_events", lambda rank: pytest.fail("read again"))
    assert timings.compile_time_rows(rank)


def test_chromium_events_json_skips_corrupted_events() -> None:
    rank = _rank(INPUTS / "simple_corrupted_json.log")
    events = json.loads(chromium_events_json(rank))
    assert len(events) == len(rank.chromium_events) - 1 == 49


# -- several ranks --------------------------------------------------------------------------


def test_divergence_across_ranks_like_tlparse() -> None:
    trace = load_trace(INPUTS / "multi_rank_logs")
    d = divergence(trace)
    assert d.any
    assert [(m.labels[0], m.labels[-1], len(m.labels), m.missing_on) for m in d.missing_ids] == [
        ("[0/1]", "[0/6]", 6, [0, 2]),
        ("[0/7]", "[0/14]", 8, [0, 2, 3]),
    ]
    assert [g.ranks for g in d.cache_groups] == [[0, 2], [1], [3]]
    assert d.cache_groups[0].facts == CacheLookups(())
    assert d.cache_groups[2].facts == CacheLookups(
        (("fx_graph", (("hit", 7),)), ("aotautograd", (("hit", 7),)))
    )
    said = [rank_group_words(g.facts) for g in d.cache_groups]
    assert said[0] == "no cache lookups" and said[2] == "fx_graph: 7 hit; aotautograd: 7 hit"
    assert [(s.label, s.ranks_by_status) for s in d.status_splits] == [
        ("[0/0]", {"error": [0, 2], "ok": [1, 3]}),
    ]
    rows = rank_rows(trace)
    assert [(r.number, r.attempts, r.chromium_events) for r in rows] == [
        (0, 1, 6),
        (1, 15, 544),
        (2, 1, 6),
        (3, 7, 179),
    ]


def test_the_ranks_rows_add_up_to_the_glance() -> None:
    """Each rank's row counts compile ids by their status over their attempts, as the
    glance does: the rows add up to its figures (they counted attempts: a rank's "3 break"
    was in no total)."""
    data = Path(__file__).parent / "data"
    from sphinx_torchtrace.trace.inputs.text_log import load_text_log

    text_log = load_text_log(data / "captured" / "torch_logs" / "ranks.log")
    # a text log has no metrics: its ids' statuses are what its lines say, as the
    # directory's badges (the glance said "4 missing" beside [0/0] *break*)
    assert triage(text_log).statuses == {"break": 3, "missing": 1}
    for trace in [
        *(
            load_trace(folder)
            for folder in [
                data / "corpus" / "ddp_4ranks",
                data / "corpus" / "ddp_4ranks_divergent",
                data / "captured" / "ranks_collective_order",
                INPUTS / "multi_rank_logs",
            ]
        ),
        text_log,
    ]:
        folder = trace.ranks[0].path
        rows, t = rank_rows(trace), triage(trace)
        added: Counter[str] = Counter()
        for row in rows:
            added.update(row.statuses)
        assert dict(added) == t.statuses, folder
        assert sum(r.compile_ids for r in rows) == t.compile_ids
        assert sum(r.attempts for r in rows) == t.attempts


def test_no_divergence_between_identical_ranks() -> None:
    trace = load_trace(INPUTS / "multi_rank_messy_input")
    assert len(trace.ranks) == 2
    d = divergence(trace)
    assert not d.any
    assert d.missing_ids == [] and d.cache_groups == [] and d.status_splits == []


def test_single_rank_never_diverges() -> None:
    assert not divergence(load_trace(SHARED / "simple")).any


# -- torch.export ---------------------------------------------------------------------------


def test_draft_export_issues() -> None:
    rank = _rank(DATA / "captured" / "draft_export" / "dedicated_log_torch_trace_j5am_2yg.log")
    issues = export_issues(rank)
    assert [(i.kind, i.reason) for i in issues] == [
        ("data_dependent", "u0 > 3"),
        ("missing_fake_kernel", "capture.scale_rows.default"),
    ]
    assert issues[0].location and issues[0].location.startswith(
        "/home/user/project/draft_export.py:35 in forward: if k > 3"
    )
    assert issues[1].detail is None  # the log gives no reason: the page says what to do
    symbols = unbacked_symbols(rank)
    assert [s.symbol for s in symbols] == ["u0", "u1"]
    programs = exported_programs(rank)
    assert len(programs) == 1 and "ExportedProgram" in programs[0]
    assert "code: k = n.item()" in programs[0]
    assert "code: k = n.item()" not in strip_source(programs[0])


def test_guard_evaluated_issue() -> None:
    issues = export_issues(_rank(INPUTS / "export_guard_added.log"))
    assert [(i.kind, i.reason) for i in issues] == [("guard_evaluated", "Eq(s0, 3)")]
    assert issues[0].location and "assert a.shape[0] == 3" in issues[0].location


# -- odd data never breaks the page ---------------------------------------------------------


def test_odd_data_does_not_raise() -> None:
    odd = Compile(CompileId(None, 0, 0), 1, 1)
    odd.metrics = [
        Metrics(
            "compilation_metrics",
            1,
            {"entire_frame_compile_time_s": "slow", "co_name": None, "dynamo_config": "{not json"},
        ),
        Metrics("bwd_compilation_metrics", 2, {"inductor_compile_time_s": True}),
    ]
    odd.failures = [Failure("failure", "", 3, type=None)]
    odd.recompile_reasons = ["", "garbage without an id", "7/x: weird"]
    rank = RankTrace("x.log", None, 0, compiles=[odd])
    rank.first_timestamp, rank.last_timestamp = "not a time", None
    trace = Trace([rank])
    assert compile_seconds(odd) is None
    assert time_totals([odd]) == []
    assert function_name(odd) is None
    assert compile_configs(trace) == []
    assert capture_span(trace.ranks) is None
    assert [g.message.headline for g in failure_groups([odd])] == ["(no reason logged)"]
    (function,) = recompiled_functions(rank)
    assert [g.previous_label for g in function.recompiles[0].reasons] == [None, None, None]
    assert chromium_events_json(rank) == "[]\n"
    assert export_issues(rank) == []


def test_recompile_limits_follow_the_run() -> None:
    configs = compile_configs(load_trace(SHARED / "recompiles"))
    assert recompile_limits(configs) == [8, 3]
    assert recompile_limits([]) == []


def test_functions_of_one_name_are_told_apart_by_their_place() -> None:
    def compile_(frame: int, version: int, filename: str) -> Compile:
        c = Compile(CompileId(None, frame, version, 0), 1, 1)
        data = {"co_name": "forward", "co_filename": filename, "co_firstlineno": 3}
        c.metrics = [Metrics("compilation_metrics", 1, data)]
        if version:
            c.recompile_reasons = [f"{frame}/0: tensor 'x' size mismatch at index 0"]
        return c

    rank = RankTrace(
        "x.log",
        None,
        0,
        compiles=[
            compile_(0, 0, "/p/a.py"),
            compile_(0, 1, "/p/a.py"),
            compile_(1, 0, "/p/b.py"),
            compile_(1, 1, "/p/b.py"),
            compile_(1, 2, "/p/b.py"),
        ],
    )
    functions = recompiled_functions(rank)
    assert [fn.shown for fn in functions] == ["forward (/p/a.py:3)", "forward (/p/b.py:3)"]
    alone = recompiled_functions(RankTrace("y.log", None, 0, compiles=rank.compiles[:2]))
    assert [fn.shown for fn in alone] == ["forward"]  # no other "forward": the name is enough


def test_a_setting_changed_and_changed_back_is_two_changes_with_their_compiles() -> None:
    """``scale_rows`` compiled 3 times under ``automatic_dynamic_shapes=False``, then once
    with the default again: the settings line said "true → false, it changed 1 time"."""
    trace = load_trace(DATA / "corpus" / "decode_recompile_limit")
    runs = config_runs(trace)
    settings = {
        s.key: s for s in notable_settings([config for config, _ in runs], [n for _, n in runs])
    }
    dynamic = settings["automatic_dynamic_shapes"]
    assert dynamic.values == ["true", "false", "true"] and dynamic.changes == 2
    assert dynamic.compiles == (5, 3, 1)  # decode_step's 5, scale_rows' 3 then 1
    assert sum(n for _, n in runs) == 9  # every compile that logged a configuration
