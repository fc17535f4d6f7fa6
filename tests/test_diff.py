"""The comparison of two runs (trace/comparing/diff.py) on real before/after pairs
captured with torch 2.13.

Each pair is one program edited (tests/capture/pairs/): what a CI job comparing the two
logs must report, and what it must not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from sphinx_torchtrace.trace import Trace, load_trace
from sphinx_torchtrace.trace.analyses.phases import TIME_PHASES
from sphinx_torchtrace.trace.comparing.changes import TraceDiff
from sphinx_torchtrace.trace.comparing.diff import diff_traces
from sphinx_torchtrace.trace.comparing.json_form import JSON_PHASE_NAMES, diff_json
from sphinx_torchtrace.trace.comparing.regressions import (
    DEFAULT_REGRESSIONS,
    parse_fail_on,
    regressions,
    validate_regressions,
)
from sphinx_torchtrace.trace.comparing.run_frames import BreakSite, base_function, frames_of
from sphinx_torchtrace.trace.comparing.text_report import report_lines

from .conftest import DATA, SHARED, SIMPLE_LOG
from .tools.hostile_log import format_record, read_records

PAIRS = DATA / "captured" / "pairs"
SCHEMA = Path(__file__).parents[1] / "sphinx_torchtrace" / "schemas" / "diff.schema.json"


def _load(pair: str, side: str) -> Trace:
    return load_trace(PAIRS / pair / side)


def _diff(pair: str, reverse: bool = False) -> TraceDiff:
    old, new = _load(pair, "baseline"), _load(pair, "new")
    return diff_traces(new, old) if reverse else diff_traces(old, new)


def _kinds(diff: TraceDiff, thresholds: dict[str, bool | float | None] | None = None) -> list[str]:
    return [r.kind for r in regressions(diff, thresholds)]


PRINT_BREAK = BreakSite(
    "Failed to trace builtin operator", "/home/user/project/program.py", "step", "GB0059"
)


def test_fixed_graph_break_is_reported_and_is_no_regression() -> None:
    diff = _diff("graph_break_fixed")
    (rank,) = diff.ranks
    assert rank.breaks_fixed == [PRINT_BREAK]
    assert rank.breaks_new == []
    # the resume function torch made for the break is gone; `step` is matched though its
    # compile ids, line numbers and graph differ
    assert [str(f.key) for f in rank.frames_gone] == ["program.py:torch_dynamo_resume_in_step"]
    step = next(f for f in rank.frames if f.key.function == "step")
    assert (step.status.baseline, step.status.new) == ("break", "ok")
    assert (step.graph_ops.baseline, step.graph_ops.new) == (2, 5)
    assert any(ln.startswith("+") and "y.cos()" in ln for ln in step.graph_diff.splitlines())
    assert any("print" in g for g in step.guards_removed)
    other = next(f for f in rank.frames if f.key.function == "other")
    assert not other.changed  # unchanged function: guard timings and ids are not changes
    assert regressions(diff) == []


def test_introduced_graph_break_is_a_regression() -> None:
    diff = _diff("graph_break_fixed", reverse=True)
    (rank,) = diff.ranks
    assert rank.breaks_new == [PRINT_BREAK]
    assert [str(f.key) for f in rank.frames_new] == ["program.py:torch_dynamo_resume_in_step"]
    found = regressions(diff)
    assert [r.kind for r in found] == ["graph_break"]
    assert found[0].subtype == "regression_graph_break"
    assert "Failed to trace builtin operator" in found[0].message
    assert _kinds(diff, parse_fail_on("error,recompile")) == []


def test_recompile_pair_reports_versions_and_new_reasons() -> None:
    diff = _diff("recompile")
    (rank,) = diff.ranks
    scale = next(f for f in rank.frames if f.key.function == "scale")
    assert (scale.versions.baseline, scale.versions.new) == (1, 3)
    assert scale.recompile_reasons_new[0] == (
        "tensor 'x' size mismatch at index 0. expected 8, actual 16"
    )
    assert (scale.kernel_count.baseline, scale.kernel_count.new) == (1, 3)
    stable = next(f for f in rank.frames if f.key.function == "stable")
    assert not stable.changed
    assert rank.breaks_new == rank.errors_new == []
    found = regressions(diff)
    assert [(r.kind, r.frame) for r in found] == [("recompile", "program.py:scale")]
    # kernels counts only when asked: three versions, three kernels
    assert _kinds(diff, {"kernels": True}) == ["recompile", "kernels"]
    assert regressions(_diff("recompile", reverse=True)) == []


def test_new_compile_error_is_a_regression() -> None:
    diff = _diff("compile_error")
    (rank,) = diff.ranks
    assert rank.errors_new == [
        BreakSite("Data-dependent branching", "/home/user/project/program.py", "clip", "GB0170")
    ]
    clip = next(f for f in rank.frames if f.key.function == "clip")
    assert (clip.status.baseline, clip.status.new) == ("ok", "error")
    assert _kinds(diff) == ["error"]
    assert _kinds(diff, parse_fail_on("graph_break")) == []
    back = _diff("compile_error", reverse=True)
    assert back.ranks[0].errors_fixed == rank.errors_new
    assert regressions(back) == []


def test_warm_cache_is_a_cache_change_and_no_regression() -> None:
    diff = _diff("cache_warm")
    (rank,) = diff.ranks
    assert rank.cache.baseline.get("miss") and rank.cache.new.get("hit")
    assert not rank.frames_new and not rank.frames_gone
    assert not rank.breaks_new and not rank.errors_new
    assert not diff.unchanged
    assert regressions(diff) == []
    # a warm cache is faster: even a strict compile-time threshold reports nothing
    strict = parse_fail_on("error,graph_break,recompile,kernels,compile_time:1.0")
    assert regressions(diff, strict) == []


def test_a_run_against_itself_is_unchanged() -> None:
    trace = load_trace(SIMPLE_LOG)
    diff = diff_traces(trace, load_trace(SIMPLE_LOG))
    assert diff.unchanged
    assert report_lines(diff) == ["No change in compilation (compile time aside)."]
    assert (
        regressions(diff, parse_fail_on("error,graph_break,recompile,kernels,compile_time")) == []
    )


def test_compile_time_ratio_threshold() -> None:
    diff = _diff("recompile")  # three compiles instead of one: slower in total
    total = diff.ranks[0].total_seconds
    assert total is not None and total.ratio is not None and total.ratio > 1.0
    assert "compile_time" in _kinds(diff, {"compile_time": 1.0})
    assert "compile_time" not in _kinds(diff, {"compile_time": total.ratio + 0.01})


def test_the_json_names_each_phase_as_published() -> None:
    """The JSON's phase names are published vocabulary that the schema lists, kept by the
    comparing room: the pages may change their words, the JSON does not."""
    assert list(JSON_PHASE_NAMES) == [phase.key for phase in TIME_PHASES]
    published = [
        "Whole frame (entire_frame_compile_time_s)",
        "Dynamo before a restart (dynamo_time_before_restart_s)",
        "Backend (backend_compile_time_s)",
        "Inductor (inductor_compile_time_s)",
        "Code generation (code_gen_time_s)",
        "Backward: Inductor (inductor_compile_time_s)",
        "Backward: code generation (code_gen_time_s)",
    ]
    assert list(JSON_PHASE_NAMES.values()) == published
    schema = json.loads(SCHEMA.read_text("utf-8"))
    assert schema["$defs"]["phase_time"]["properties"]["phase"]["enum"] == published
    (rank,) = diff_json(_diff("cache_warm"))["ranks"]
    assert [t["phase"] for t in rank["compile_time"]] == [published[0], *published[2:]]


def test_frames_match_by_function_not_compile_id() -> None:
    rank = _load("graph_break_fixed", "baseline").ranks[0]
    labels = {str(f.key): f.label for f in frames_of(rank)}
    assert labels == {
        "program.py:step": "[0/*]",
        "program.py:torch_dynamo_resume_in_step": "[1/*]",
        "program.py:other": "[2/*]",
    }
    new_rank = _load("graph_break_fixed", "new").ranks[0]
    assert {str(f.key): f.label for f in frames_of(new_rank)}["program.py:other"] == "[1/*]"
    rewritten = frames_of(rank, rewrite=lambda p: p.replace("/home/user/project", "src"))
    assert rewritten[0].key.file == "src/program.py"


def test_resume_suffix_dropped() -> None:
    assert base_function("torch_dynamo_resume_in_step_at_14") == "torch_dynamo_resume_in_step"
    assert base_function("torch_dynamo_resume_in_f_at_3_at_9") == "torch_dynamo_resume_in_f_at_3"
    assert base_function("step_at_14") == "step_at_14"


def test_ranks_paired_by_number(tmp_path: Path) -> None:
    ranks = DATA / "captured" / "multi_rank_gloo"
    both = load_trace(ranks)
    one = load_trace(sorted(ranks.glob("*rank_0*.log"))[0])
    diff = diff_traces(both, one)
    assert [r.rank for r in diff.ranks] == [0]
    assert diff.ranks_only_baseline == [1]
    assert "rank 1: only in the baseline" in report_lines(diff)


def test_diff_json_is_plain_json() -> None:
    data = diff_json(_diff("graph_break_fixed"))
    text = json.dumps(data)
    assert json.loads(text) == data
    (rank,) = data["ranks"]
    (fixed,) = rank["graph_breaks_fixed"]
    evidence = fixed.pop("evidence")
    assert fixed == {
        "reason": PRINT_BREAK.reason,
        "file": PRINT_BREAK.file,
        "function": "step",
        "registry_id": "GB0059",
    }
    assert re.fullmatch(r".*/graph_break_fixed/baseline/[^/]+\.log:\d+", evidence)
    assert rank["frames_gone"] == ["program.py:torch_dynamo_resume_in_step"]
    step = next(f for f in rank["frames"] if f["function"] == "step")
    assert step["status"] == {"baseline": "break", "new": "ok"}


def test_fail_on_and_config_share_one_validator() -> None:
    assert validate_regressions({}) == DEFAULT_REGRESSIONS
    assert parse_fail_on("error,graph_break,recompile") == DEFAULT_REGRESSIONS
    assert parse_fail_on("compile_time:1.5")["compile_time"] == 1.5
    assert parse_fail_on("compile_time")["compile_time"] == 1.25
    assert parse_fail_on("") == {
        **DEFAULT_REGRESSIONS,
        "error": False,
        "graph_break": False,
        "recompile": False,
    }
    assert validate_regressions({"kernels": True})["kernels"] is True
    for bad in ("speed", "compile_time:fast", "compile_time:0.5", "error:2"):
        with pytest.raises(ValueError):
            parse_fail_on(bad)
    bad_configs: list[object] = [[], {"error": "yes"}, {"compile_time": -1}, {"nope": True}]
    for bad_config in bad_configs:
        with pytest.raises(ValueError):
            validate_regressions(bad_config)


def test_generated_files_and_repeated_ids_get_stable_keys() -> None:
    autograd = frames_of(load_trace(DATA / "captured" / "compiled_autograd").ranks[0])
    # `<eval_with_key>.7` counts FX modules made in the process: the number is dropped
    assert [(str(f.key), f.label) for f in autograd if f.label.startswith("[!")] == [
        ("<eval_with_key>:compiled_autograd:forward", "[!0/1/*]"),
        ("<eval_with_key>:compiled_autograd:forward #2", "[!1/3/*]"),
    ]
    # after torch._dynamo.reset(), `[0/0]` again is another function
    errors = frames_of(load_trace(SHARED / "compile_error").ranks[0])
    assert [(str(f.key), f.label, f.status) for f in errors[:2]] == [
        ("compile_error.py:f1", "[0/*]", "error"),
        ("compile_error.py:f2", "[0/*] #2", "error"),
    ]


def _rewritten(source: Path, dest: Path, change: Callable[[str], str]) -> Path:
    """``source`` with ``change`` applied to every envelope and payload, md5s made right."""
    out = []
    for record in read_records(source):
        record.envelope = json.loads(change(json.dumps(record.envelope)))
        if record.payload is not None:
            record.payload = change(record.payload)
        out.append(format_record(record))
    dest.write_text("".join(out), encoding="utf-8")
    return dest


def test_breaks_are_matched_by_registry_id_whatever_their_wording(tmp_path: Path) -> None:
    """A newer torch words a break anew; its registry id (``GB0059``) says it is the same."""
    baseline = next((PAIRS / "graph_break_fixed" / "baseline").glob("*.log"))
    reworded = _rewritten(
        baseline,
        tmp_path / "reworded.log",
        lambda t: t.replace(
            "Failed to trace builtin operator", "Could not trace a builtin operator"
        ),
    )
    diff = diff_traces(load_trace(baseline), load_trace(reworded))
    assert all(not r.breaks_new and not r.breaks_fixed for r in diff.ranks)
    # without ids (older torch), the wording is all there is: a new break and a fixed one
    no_ids = _rewritten(
        reworded,
        tmp_path / "no_ids.log",
        lambda t: re.sub(
            r"https://meta-pytorch\.github\.io/compile-graph-break-site/gb/gb\d{4}\.html", "", t
        ),
    )
    diff = diff_traces(load_trace(baseline), load_trace(no_ids))
    assert any(r.breaks_new and r.breaks_fixed for r in diff.ranks)
