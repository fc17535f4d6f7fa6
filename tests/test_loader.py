"""Which logs a path means: a file, a directory's ranks, its newest log, a list."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sphinx_torchtrace.trace import TraceReadError, load_trace, resolve_logs

DATA = Path(__file__).parent / "data"
INPUTS = DATA / "shared" / "tlparse-inputs" / "inputs"
SIMPLE = DATA / "shared" / "simple" / "dedicated_log_torch_trace_5aek85xk.log"
GRAPH_BREAKS = DATA / "shared" / "graph_breaks" / "dedicated_log_torch_trace_051e7f1c.log"


def test_a_directory_of_rank_logs_is_one_trace_per_rank() -> None:
    trace = load_trace(INPUTS / "multi_rank_logs")
    assert [r.rank for r in trace.ranks] == [0, 1, 2, 3]
    assert trace.is_multi_rank
    assert [len({str(c.id) for c in r.compiles}) for r in trace.ranks] == [1, 16, 1, 7]


def test_rank_logs_with_suffixes_and_stray_files() -> None:
    names = [p.name for p in resolve_logs(INPUTS / "multi_rank_schedule")]
    assert names == [
        "dedicated_log_torch_trace_rank_0_6u3fubwl.log",
        "dedicated_log_torch_trace_rank_1_n8zycf07.log",
        "dedicated_log_torch_trace_rank_2.log",
    ]
    messy = resolve_logs(INPUTS / "multi_rank_messy_input")
    assert [p.name for p in messy] == [
        "dedicated_log_torch_trace_rank_0.log",
        "dedicated_log_torch_trace_rank_1.log",
    ]


def test_ranks_can_be_chosen() -> None:
    trace = load_trace(INPUTS / "multi_rank_logs", ranks=[1, 3])
    assert [r.rank for r in trace.ranks] == [1, 3]


def test_the_rank_comes_from_the_log_not_its_name() -> None:
    # tlparse's own test data: the rank_5 file says rank 1 inside.
    trace = load_trace(INPUTS / "multi_rank_runtime", ranks=[5])
    assert trace.ranks[0].rank == 1


def test_a_directory_without_rank_logs_means_its_newest_log(tmp_path: Path) -> None:
    old = tmp_path / "dedicated_log_torch_trace_aaaa.log"
    new = tmp_path / "dedicated_log_torch_trace_bbbb.log"
    shutil.copy(GRAPH_BREAKS, new)
    shutil.copy(SIMPLE, old)
    os.utime(old, (1_000_000, 1_000_000))
    (tmp_path / "notes.txt").write_text("not a log")
    trace = load_trace(tmp_path)
    assert [Path(r.path).name for r in trace.ranks] == [new.name]
    assert len(trace.ranks[0].compiles) == 28


def test_latest_picks_the_newest_log_even_among_rank_logs(tmp_path: Path) -> None:
    for rank, src in ((0, SIMPLE), (1, GRAPH_BREAKS)):
        shutil.copy(src, tmp_path / f"dedicated_log_torch_trace_rank_{rank}_x.log")
    # file times say rank 0 is newer; the times recorded inside say graph_breaks ran later
    os.utime(tmp_path / "dedicated_log_torch_trace_rank_1_x.log", (1_000_000, 1_000_000))
    assert len(load_trace(tmp_path).ranks) == 2
    latest = load_trace(tmp_path, latest=True)
    assert [Path(r.path).name for r in latest.ranks] == ["dedicated_log_torch_trace_rank_1_x.log"]


def test_an_empty_directory_or_a_missing_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(TraceReadError, match=str(tmp_path)):
        load_trace(tmp_path)
    with pytest.raises(TraceReadError, match="nope.log"):
        load_trace(tmp_path / "nope.log")


def test_display_paths_are_relative_to_a_root() -> None:
    trace = load_trace(SIMPLE, display_root=DATA)
    assert trace.ranks[0].path == "shared/simple/dedicated_log_torch_trace_5aek85xk.log"


def test_counts_per_kind_like_tlparse_stats() -> None:
    rank = load_trace(INPUTS / "simple_corrupted_json.log").ranks[0]
    assert rank.problem_counts == {"md5": 1}
    assert rank.stats["chromium_event"] == 50
    assert rank.stats["str"] == 12


def test_the_ranks_of_a_job_share_their_equal_texts(tmp_path: Path) -> None:
    """Two ranks' models hold one copy of each text they both logged (configs, stacks,
    reasons), and the same values as each log read alone: a thousand ranks fit in memory."""
    from sphinx_torchtrace.trace.inputs.loader import read_log

    gloo = DATA / "captured" / "multi_rank_gloo"
    trace = load_trace(gloo)
    alone = [read_log(p) for p in resolve_logs(gloo)]
    for rank, own in zip(trace.ranks, alone, strict=True):
        assert [m.data for c in rank.compiles for m in c.metrics] == [
            m.data for c in own.compiles for m in c.metrics
        ]
        assert [c.tensor_descriptions for c in rank.compiles] == [
            c.tensor_descriptions for c in own.compiles
        ]
        assert [c.stack for c in rank.compiles] == [c.stack for c in own.compiles]
    first, second = (
        [m.data for c in r.compiles for m in c.compilation_metrics] for r in trace.ranks
    )
    configs = [
        (a[k], b[k])
        for a, b in zip(first, second, strict=False)
        for k in a
        if k.endswith("_config") and isinstance(a.get(k), str) and a[k] == b.get(k)
    ]
    assert configs and all(a is b for a, b in configs)
    frames = [
        (x.filename, y.filename)
        for c, d in zip(trace.ranks[0].compiles, trace.ranks[1].compiles, strict=False)
        for x, y in zip(c.stack or [], d.stack or [], strict=False)
    ]
    assert frames and all(x is y for x, y in frames if x == y)
