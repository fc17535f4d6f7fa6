"""What changed between two compiles of the same frame (trace/analyses/compare.py), on
real torch logs."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from sphinx_torchtrace.trace import CompileId, RankTrace, load_trace
from sphinx_torchtrace.trace.analyses.compare import (
    failed_guard,
    graph_diff,
    next_compile,
    previous_compile,
    recompile_reason_entries,
)
from sphinx_torchtrace.trace.model import Artifact, Compile

DATA = Path(__file__).parent / "data" / "shared"


@cache
def rank_of(name: str) -> RankTrace:
    return load_trace(DATA / name).ranks[0]


def test_first_compile_has_no_previous() -> None:
    rank = rank_of("recompiles")
    assert previous_compile(rank, rank.compile("[0/0]")) is None
    assert previous_compile(rank, rank.compile("[-/-]")) is None


def test_recompile_follows_the_compile_whose_guard_failed() -> None:
    rank = rank_of("recompiles")
    current = rank.compile("[0/1]")
    previous = previous_compile(rank, current)
    assert previous is rank.compile("[0/0]")
    guard = failed_guard(current, previous)
    assert guard == "tensor 'x' size mismatch at index 0. expected 4, actual 8"
    assert previous_compile(rank, rank.compile("[1/3]")) is rank.compile("[1/2]")
    assert next_compile(rank, previous) is current
    assert next_compile(rank, rank.compile("[0/4]")) is None


def test_graph_diff_shows_the_changed_shapes() -> None:
    rank = rank_of("recompiles")
    diff = graph_diff(rank.compile("[0/0]"), rank.compile("[0/1]"))
    assert diff.startswith("--- [0/0] dynamo_output_graph\n+++ [0/1] dynamo_output_graph\n")
    lines = diff.splitlines()[2:]
    removed = [line for line in lines if line.startswith("-")]
    added = [line for line in lines if line.startswith("+")]
    assert any('L_x_: "f32[4][1]cpu"' in line for line in removed)
    assert any('L_x_: "f32[8][1]cpu"' in line for line in added)
    # The scalar sum has the same shape in both: context, not a change.
    assert any(line.startswith(" ") and 'sum_1: "f32[][]cpu"' in line for line in lines)
    assert not any("sum_1: " in line for line in removed + added)


def test_graph_diff_shows_a_new_input() -> None:
    """`scale` stopped being a specialized constant: it becomes a graph input."""
    rank = rank_of("recompiles")
    diff = graph_diff(rank.compile("[1/2]"), rank.compile("[1/3]"))
    assert "+        l_scale_ = L_scale_" in diff.splitlines()
    assert any(line.startswith("-") and "l_x_ * 2.0" in line for line in diff.splitlines())


def test_no_diff_without_a_graph() -> None:
    """[2/3] failed (recompile limit) before Dynamo produced a graph."""
    rank = rank_of("recompiles")
    failed = rank.compile("[2/3]")
    previous = previous_compile(rank, failed)
    assert previous is rank.compile("[2/2]")
    assert graph_diff(previous, failed) == ""
    assert failed_guard(failed, previous) is not None
    assert failed_guard(failed, previous).startswith("n == 2")  # type: ignore[union-attr]


def test_restart_attempt_is_not_a_recompile() -> None:
    rank = rank_of("graph_breaks")
    assert previous_compile(rank, rank.compile("[5/0_1]")) is None


def test_same_id_after_reset_compares_with_the_earlier_occurrence() -> None:
    rank = rank_of("graph_breaks")
    again = rank.compile("[0/0_1] #2")
    previous = previous_compile(rank, again)
    assert previous is not None
    assert previous.label == "[0/0_1]"
    assert failed_guard(again, previous) is None  # a reset, not a failed guard
    assert graph_diff(previous, again) == ""  # same function, same graph: nothing to show
    # The graph-break attempt is compared with the graph-break attempt, not with [0/0_1].
    assert previous_compile(rank, rank.compile("[0/0] #2")) is rank.compile("[0/0]")


def test_same_id_after_reset_of_another_function_is_not_compared() -> None:
    def compile_of(fcid: int, occurrence: int, function: str) -> Compile:
        c = Compile(CompileId(None, 0, fcid, 0), occurrence, first_line=occurrence)
        c.artifacts.append(Artifact(function, "dynamo_output_graph", 1, 0, None))
        from sphinx_torchtrace.trace.model import Metrics

        c.metrics.append(
            Metrics("compilation_metrics", 1, {"co_name": function, "co_filename": "m.py"})
        )
        return c

    rank = RankTrace("log", None, 0)
    first, other = compile_of(0, 1, "f"), compile_of(0, 2, "g")
    rank.compiles.extend([first, other])
    assert previous_compile(rank, other) is None
    same = compile_of(0, 3, "g")
    rank.compiles.append(same)
    assert previous_compile(rank, same) is other


def test_recompile_reasons_split_by_cache_entry() -> None:
    rank = rank_of("recompiles")
    entries = recompile_reason_entries(rank.compile("[0/2]"))
    assert [entry for entry, _ in entries] == ["0/1", "0/0"]
    assert entries[0][1] == "tensor 'x' size mismatch at index 0. expected 8, actual 16"


@pytest.mark.parametrize("reasons", [["no entry prefix"], [""], ["12: odd"]])
def test_odd_recompile_reasons_do_not_raise(reasons: list[str]) -> None:
    c = Compile(CompileId(None, 0, 1, 0), 1, first_line=1)
    c.recompile_reasons = reasons
    previous = Compile(CompileId(None, 0, 0, 0), 1, first_line=0)
    assert failed_guard(c, previous) is None
    assert [entry for entry, _ in recompile_reason_entries(c)] == [None]
