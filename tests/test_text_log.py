"""TORCH_LOGS text logs read into the trace model, and the pages they give.

Logs: ``tests/data/captured/torch_logs/`` (torch 2.13 CPU, ``tests/capture/torch_logs.py``;
see tests/capture/README.md) and ``seed003_old_format.log``: the lines of the older
``[2024-03-25 11:07:02,184] [4/0] logger: [DEBUG] ...`` format quoted in seed 003 (the
seed is the only source of that format).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sphinx_torchtrace.site.plan import PageSettings, plan_trace
from sphinx_torchtrace.trace import Compile, RankTrace, load_trace
from sphinx_torchtrace.trace.analyses.status import attempts_status, frame_status
from sphinx_torchtrace.trace.inputs.text_log import (
    LOG_LINES,
    attach_text_log,
    load_text_log,
    parse_text_log,
)

from .conftest import DATA
from .test_hostile_values import pages_of

LOGS = DATA / "captured" / "torch_logs"
OPTIONS = LOGS / "options.log"  # graph_breaks,recompiles,guards,dynamic,output_code
PLUS_DYNAMO = LOGS / "plus_dynamo.log"
PLUS_INDUCTOR = LOGS / "plus_inductor.log"
OLD_FORMAT = LOGS / "seed003_old_format.log"
WITH_TRACE = LOGS / "with_trace"
RANKS = LOGS / "ranks.log"


def statuses(rank: RankTrace) -> dict[str, str]:
    return {c.label: c.status for c in rank.compiles}


def artifact_names(c: Compile) -> list[str]:
    return [a.name for a in c.artifacts]


def test_options_log_frames_statuses_and_artifacts() -> None:
    trace = load_text_log(OPTIONS)
    assert not trace.diagnostics
    (rank,) = trace.ranks
    assert rank.source == "torch_logs"
    assert statuses(rank) == {
        "[-/-]": "missing",
        "[0/0]": "break",  # the graph break restarted the analysis: [0/0_1]
        "[0/0_1]": "missing",  # no metrics in a text log
        "[1/0]": "missing",
        "[2/0]": "missing",
        "[2/1]": "missing",
        "[2/2]": "missing",
        "[3/0]": "error",  # the failing backend (WON'T CONVERT, suppressed)
    }
    # the badge of [0/0] (all attempts) says break, as a trace's would
    assert attempts_status(rank, rank.compile("[0/0_1]")) == "break"
    assert frame_status(rank, rank.compile("[3/0]").id) == "error"

    (brk,) = rank.compile("[0/0]").failures
    assert brk.kind == "graph_break"
    assert brk.user_location is not None and brk.user_location.endswith("torch_logs.py:18")
    assert brk.reason.startswith("Graph Break Reason: Encountered graph break")

    assert rank.compile("[2/1]").recompile_reasons == [
        "2/0: tensor 'x' size mismatch at index 0. expected 4, actual 8"
    ]
    assert rank.compile("[2/2]").recompile_reasons == [
        "2/1: tensor 'x' dtype mismatch. expected Float, actual Double",
        "2/0: tensor 'x' dtype mismatch. expected Float, actual Double",
    ]
    (failure,) = rank.compile("[3/0]").failures
    assert failure.type == "BackendCompilerFailed"
    assert "intentional failure in custom backend" in failure.reason
    assert failure.user_location is not None and failure.user_location.endswith("torch_logs.py:43")

    c = rank.compile("[1/0]")
    assert artifact_names(c) == ["inductor_output_code", "dynamo_cpp_guards_str", LOG_LINES]
    (code,) = c.artifacts_named("inductor_output_code")
    assert [k.name for k in code.kernels] == ["cpp_fused_cos_mul_relu_0"]
    assert code.text().startswith("# AOT ID:")  # the "Output code:" header line is not code
    (guards,) = c.artifacts_named("dynamo_cpp_guards_str")
    assert "TREE_GUARD_MANAGER:" in guards.text() and "Guard eval latency" in guards.text()


def test_every_line_is_kept_in_order() -> None:
    """Lines that became no artifact are in the log-lines artifacts; a Python warning
    (no prefix) goes to [-/-], in file order."""
    rank = load_text_log(OPTIONS).ranks[0]
    unknown = rank.compile("[-/-]").artifacts_named(LOG_LINES)[0].text().split("\n")
    assert unknown[0].endswith(
        "UserWarning: Failed to initialize NumPy: No module named 'numpy' "
        "(Triggered internally at /__w/pytorch/pytorch/torch/csrc/utils/"
        "tensor_numpy.cpp:84.)"
    )
    assert any("UserWarning: a Python warning between compiles" in line for line in unknown)
    lines = rank.compile("[1/0]").artifacts_named(LOG_LINES)[0].text().split("\n")
    assert lines[0].endswith("] [1/0] create_env")
    assert any("Output code written to:" in line for line in lines)


def test_plus_dynamo_gives_dynamo_graphs() -> None:
    rank = load_text_log(PLUS_DYNAMO).ranks[0]
    assert statuses(rank)["[0/0]"] == "break" and statuses(rank)["[3/0]"] == "error"
    graph = rank.compile("[1/0]").artifacts_named("dynamo_output_graph")[0]
    assert graph.text().lstrip().startswith("===== __compiled_fn_")
    assert graph.node_count == 4  # l_a_ = L_a_, cos, mul, relu (the resumed frame)
    assert rank.stats["graph"] == 6


def test_plus_inductor_gives_inductor_graphs() -> None:
    rank = load_text_log(PLUS_INDUCTOR).ranks[0]
    compiled = [c for c in rank.compiles if not c.id.is_unknown]
    assert compiled, "inductor messages carry compile ids"
    first = rank.compile("[0/0_1]")
    assert {"inductor_pre_grad_graph", "inductor_post_grad_graph"} <= set(artifact_names(first))


def test_old_format_of_seed_003() -> None:
    """The 2024 format: ``[date time] [4/0] logger.__artifact: [LEVEL] text``."""
    rank = load_text_log(OLD_FORMAT).ranks[0]
    assert rank.pids == []  # the old format names no pid
    c = rank.compile("[4/0]")
    assert artifact_names(c) == [
        "dynamo_output_graph",
        "aot_forward_graph",
        "inductor_post_grad_graph",
        "inductor_output_code",
        "dynamo_cpp_guards_str",
        LOG_LINES,
    ]
    assert c.artifacts_named("dynamo_output_graph")[0].node_count == 3
    (code,) = c.artifacts_named("inductor_output_code")
    assert [k.name for k in code.kernels] == ["triton_poi_fused_mul_0"]
    assert c.status == "missing"


def test_text_log_pages_render() -> None:
    """The frame pages of a text log: the usual sections, and the note that a text log
    carries no metrics."""
    plan = plan_trace("logs", load_text_log(OPTIONS), "torchtrace", fold_bytes=0)
    pages = pages_of(plan, PageSettings())
    frame = next(t for d, t in pages.items() if d.endswith("/frame-3-0"))
    assert "a text log carries no metrics" in frame
    assert "BackendCompilerFailed" in frame
    kernel_pages = [d for d in pages if "/kernel-" in d]
    # [2/1] recompiled for a new size: its kernel is [2/0]'s but for numbers, no page
    assert len(kernel_pages) == 4 and not any("frame-2-1/" in d for d in kernel_pages)
    resized = next(t for d, t in pages.items() if d.endswith("/frame-2-1"))
    assert "Every kernel is [2/0]'s (its source the same, or the same but for its numbers)" in (
        resized
    )
    overview = pages[plan.index_docname]
    assert "[3/0]" in overview


def test_rank_prefixes_split_ranks() -> None:
    """torchrun's ``[rankN]:`` prefixes (TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE) make ranks."""
    if not RANKS.exists():
        pytest.skip("ranks.log not captured")
    trace = load_text_log(RANKS)
    ranks = {r.rank: r for r in trace.ranks}
    assert set(ranks) == {0, 1}
    assert statuses(ranks[0])["[0/0]"] == "break"
    assert "[0/1]" in statuses(ranks[1]) and "[0/1]" not in statuses(ranks[0])
    assert ranks[1].compile("[0/1]").recompile_reasons


def test_interleaved_ranks_and_multi_line_messages() -> None:
    lines = [
        "[rank0]:V1122 12:43:35.056000 11 torch/_dynamo/guards.py:5396] [0/1] [__recompiles] "
        "Recompiling function f in /p/x.py:3",
        "[rank1]:I1122 12:43:35.056000 12 torch/fx/experimental/symbolic_shapes.py:1] [0/0] hi",
        "[rank0]:V1122 12:43:35.056000 11 torch/_dynamo/guards.py:5396] [0/1] [__recompiles] "
        "    triggered by the following guard failure(s):",
        "[rank0]:V1122 12:43:35.056000 11 torch/_dynamo/guards.py:5396] [0/1] [__recompiles] "
        "    - 0/0: tensor 'x' size mismatch",
        "[rank1]:plain stderr line",
    ]
    trace = parse_text_log("\n".join(lines).encode(), "x.log")
    r0, r1 = trace.ranks
    assert (r0.rank, r1.rank) == (0, 1)
    assert r0.compile("[0/1]").recompile_reasons == ["0/0: tensor 'x' size mismatch"]
    assert r1.compile("[-/-]").artifacts_named(LOG_LINES)[0].text() == "plain stderr line"


def test_beside_a_trace_of_the_same_run() -> None:
    trace = load_trace(next(WITH_TRACE.glob("dedicated_log_torch_trace_*.log")))
    text = load_text_log(WITH_TRACE / "torch_logs.log")
    assert attach_text_log(trace, text) == []
    rank = trace.ranks[0]
    c = rank.compile("[1/0]")
    assert LOG_LINES in artifact_names(c)
    assert rank.source == "trace" and c.status == "ok"  # metrics still decide
    plan = plan_trace("run", trace, "torchtrace")
    pages = pages_of(plan, PageSettings())
    frame = next(t for d, t in pages.items() if d.endswith("/frame-1-0"))
    assert LOG_LINES in frame and "Output code written to:" in frame


@pytest.mark.parametrize(
    "junk",
    [
        b"\xff\xfe\x00binary\x00junk\n" * 50,
        b"V1122 12:43:35.056000 1 a.py:1] [0/0" + b"]" * 100_000 + b"\n",
        b"[rank0]:" * 50_000 + b"\n",
        b"V1122 12:43:35.056000 1 " + b"a" * 500_000 + b":1] x\n",
        b"[" * 200_000 + b"\n" + b"[2024-03-25 11:07:02,184] " + b"a." * 100_000 + b"\n",
    ],
)
def test_hostile_text_is_bounded(junk: bytes, tmp_path: Path) -> None:
    path = tmp_path / "junk.log"
    path.write_bytes(junk)
    start = time.perf_counter()
    trace = load_text_log(path)
    assert time.perf_counter() - start < 2.0
    plan = plan_trace("junk", trace, "torchtrace")
    pages_of(plan, PageSettings())  # renders without raising


def test_not_a_text_log_is_one_located_warning(tmp_path: Path) -> None:
    path = tmp_path / "junk.log"
    path.write_bytes(b"plain\n\xff\xfe binary\n")
    trace = load_text_log(path)
    assert [(d.subtype, d.line) for d in trace.diagnostics] == [("encoding", 2), ("text_log", 0)]
    lines = trace.ranks[0].compile("[-/-]").artifacts_named(LOG_LINES)[0].text()
    assert lines == "plain\n\ufffd\ufffd binary"


def test_cut_at_max_bytes(tmp_path: Path) -> None:
    trace = load_text_log(OPTIONS, max_bytes=20_000)
    assert [d.subtype for d in trace.diagnostics] == ["limit"]
    assert trace.ranks[0].compiles
