"""CUDA graph trees: from trace metrics and from ``TORCH_LOGS=cudagraphs`` text logs.

No GPU was lent to the session that wrote this, so there is no captured
``mode="reduce-overhead"`` run: the trace side uses tlparse's test input that holds
``runtime_cudagraphify_time_us``; the text side uses seed 003's lines (older torch) and a
log written here line by line in torch 2.13's formats (the call sites are named on each
line, and ``test_patterns_match_torch_sources`` checks those formats against torch).
"""

from __future__ import annotations

import inspect
import re
import time
from pathlib import Path

import pytest

from sphinx_torchtrace.site.plan import PageSettings, plan_trace
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses import cudagraphs as cg
from sphinx_torchtrace.trace.inputs.text_log import load_text_log

from .conftest import DATA, SHARED, SiteMaker, warnings_of
from .test_hostile_values import pages_of

AUTOTUNE = SHARED / "tlparse-inputs" / "inputs" / "autotune_with_compile_id.log"
OLD_FORMAT = DATA / "captured" / "torch_logs" / "seed003_old_format.log"

P = "V1122 12:43:35.056000 4242 "
#: torch 2.13's messages, each at its call site (cudagraph_trees.py / cudagraph_utils.py).
TORCH_2_13_LOG = "\n".join(
    [
        P + "torch/_dynamo/symbolic_convert.py:1] [0/0] create_env",
        "W1122 12:43:36.000000 4242 torch/_inductor/cudagraph_utils.py:380] [1/0] "
        "[__cudagraphs] skipping cudagraphs due to mutated inputs (1 instances). "
        "Found from : ",
        "W1122 12:43:36.000000 4242 torch/_inductor/cudagraph_utils.py:380] [1/0] "
        '[__cudagraphs]    File "/home/user/project/m.py", line 9, in f',
        "I1122 12:43:37.000000 4242 torch/_inductor/cudagraph_trees.py:443] [0/0] "
        "[__cudagraphs] Recording cudagraph tree for graph without symints",
        "V1122 12:43:37.100000 4242 torch/_inductor/cudagraph_trees.py:2451] [__cudagraphs] "
        "[0/0] Running warmup function=fn_0, mode=FORWARD",
        "V1122 12:43:37.200000 4242 torch/_inductor/cudagraph_trees.py:2404] [__cudagraphs] "
        "[0/0] Recording function=fn_0, mode=FORWARD, cuda_graph_id=0, inputs: [f32[8]]",
        "V1122 12:43:38.000000 4242 torch/_inductor/cudagraph_trees.py:2311] [__cudagraphs] "
        "[0/0] Re-recording function=fn_0, mode=FORWARD, reason=static input data pointer "
        "changed.",
        "V1122 12:43:38.100000 4242 torch/_inductor/cudagraph_trees.py:2404] [__cudagraphs] "
        "[0/0] Recording function=fn_0, mode=FORWARD, cuda_graph_id=1, inputs: [f32[8]]",
    ]
)


def test_trace_metrics_say_recorded() -> None:
    """``runtime_cudagraphify_time_us`` of a runtime metrics record: the frame ran as CUDA
    graphs; it shows on the frame page and in the overview's summary."""
    trace = load_trace(AUTOTUNE)
    frames = cg.rank_cudagraphs(trace.ranks[0])
    assert [(f.compile.label, f.outcome, f.record_time_us) for f in frames] == [
        ("[0/0]", "recorded", 282272.0)
    ]
    pages = pages_of(plan_trace("at", trace, "torchtrace"), PageSettings())
    frame = next(t for d, t in pages.items() if d.endswith("/frame-0-0"))
    assert "CUDA graphs" in frame and "Time spent recording at run time: 0.282 s." in frame
    overview = next(t for d, t in pages.items() if d.endswith("/index"))
    assert "Re-recordings are counted from TORCH_LOGS=cudagraphs text logs only" in overview


def test_old_format_messages_of_seed_003() -> None:
    rank = load_text_log(OLD_FORMAT).ranks[0]
    (found,) = cg.rank_cudagraphs(rank)
    assert found.compile.label == "[-/-]"  # the old lines name no compile id
    kinds = [(e.kind, e.function, e.graph_id) for e in found.events]
    assert ("warmup", "0", None) in kinds and ("record", "0", 0) in kinds
    assert found.outcome == "recorded"


def test_torch_2_13_messages(tmp_path: Path) -> None:
    path = tmp_path / "cudagraphs.log"
    path.write_text(TORCH_2_13_LOG + "\n", encoding="utf-8")
    rank = load_text_log(path).ranks[0]
    by_label = {f.compile.label: f for f in cg.rank_cudagraphs(rank)}
    recorded, skipped = by_label["[0/0]"], by_label["[1/0]"]
    assert recorded.outcome == "recorded"
    assert (recorded.count("tree"), recorded.count("warmup"), recorded.count("record")) == (1, 1, 2)
    assert recorded.rerecord_reasons == ["static input data pointer changed."]
    assert [e.graph_id for e in recorded.events if e.kind == "record"] == [0, 1]
    assert skipped.outcome == "skipped"
    assert skipped.skip_reasons == ["mutated inputs (1 instances). Found from :"]
    pages = pages_of(plan_trace("cg", load_text_log(path), "torchtrace"), PageSettings())
    overview = next(t for d, t in pages.items() if d.endswith("/index"))
    assert "CUDA graphs skipped" in overview and "runs as CUDA graphs" in overview
    frame = next(t for d, t in pages.items() if d.endswith("/frame-0-0"))
    assert "From the text log: 1 tree recordings, 1 warm-ups, 2 recordings, 1 re-recordings." in (
        frame
    )


def test_no_cuda_graphs_no_section() -> None:
    trace = load_trace(SHARED / "simple" / "dedicated_log_torch_trace_5aek85xk.log")
    assert cg.rank_cudagraphs(trace.ranks[0]) == []
    pages = pages_of(plan_trace("s", trace, "torchtrace"), PageSettings())
    assert not any("CUDA graphs" in t for t in pages.values())


def test_patterns_are_bounded() -> None:
    """A hostile line costs linear time: bounded repeats only."""
    start = time.perf_counter()
    assert cg.parse_event("Recording function=" + "a, " * 100_000, 1) is None
    assert cg.parse_event("Re-recording function=" + "a" * 10**6 + ", mode=X, reason=", 1) is None
    skip = cg.parse_event("skipping cudagraphs due to " + "x" * 10**6, 1)
    assert skip is not None and skip.kind == "skip"
    assert time.perf_counter() - start < 1.0


# -- the formats, against torch's own source ----------------------------------------------


def _literal(source: str, start: str) -> str:
    """The string literal in ``source`` that begins with ``start``."""
    m = re.search(r'"(' + re.escape(start) + r'[^"]*)"', source)
    assert m, f"torch no longer logs {start!r}"
    return m.group(1)


def _filled(fmt: str) -> str:
    """A %-format message as torch would log it, the compile id prefix taken off (the text
    log reader takes it as the message's compile id)."""
    text = fmt.replace("%d", "3").replace("%s", "fn_0")
    return text.removeprefix("[fn_0] ")


@pytest.mark.torch
def test_patterns_match_torch_sources() -> None:
    trees = pytest.importorskip("torch._inductor.cudagraph_trees")
    utils = pytest.importorskip("torch._inductor.cudagraph_utils")
    source = inspect.getsource(trees)
    expected = {
        "[%s] Recording cudagraph tree for graph": "tree",
        "[%s] Recording cudagraph tree for symint": "tree",
        "[%s] Running warmup function=": "warmup",
        "[%s] Recording function=": "record",
        "[%s] Re-recording function=": "rerecord",
        "[%s] Running eager function=": "eager",
    }
    for start, kind in expected.items():
        message = _filled(_literal(source, start))
        event = cg.parse_event(message, 1)
        assert event is not None and event.kind == kind, message
    skip = cg.parse_event(utils.format_default_skip_message("mutated inputs"), 1)
    assert skip is not None and skip.reason == "mutated inputs"
    assert 'f"skipping cudagraph due to function {function_id.id} exceeding max "' in source
    limit = cg.parse_event("skipping cudagraph due to function 0 exceeding max re-recording", 1)
    assert limit is not None and limit.kind == "skip"
    # the metric the trace side reads is the one torch sets
    assert '"cudagraph_skip_reason"' in inspect.getsource(utils)


def test_cuda_graphs_in_a_real_build(make_site: SiteMaker, tmp_path: Path) -> None:
    """A trace's CUDA graph metrics and a ``TORCH_LOGS=cudagraphs`` text log, built by
    Sphinx: the frame pages' "CUDA graphs" sections and the overviews' summaries."""
    (tmp_path / "cg.log").write_text(TORCH_2_13_LOG + "\n", encoding="utf-8")
    app = make_site(
        "simple",
        pages={
            "index.rst": "CUDA graphs\n===========\n\n.. toctree::\n\n   cg\n",
            "cg.rst": "Runs\n====\n\n"
            ".. torchtrace:: @DATA@/shared/tlparse-inputs/inputs/autotune_with_compile_id.log\n"
            "   :name: metrics\n\n"
            ".. torchtrace:: ../cg.log\n   :name: messages\n",
        },
    )
    assert "torchtrace." not in warnings_of(app), warnings_of(app)
    out = Path(app.outdir) / "torchtrace"

    def text(page: str) -> str:
        return " ".join(re.sub(r"<[^>]+>", " ", (out / page).read_text("utf-8")).split())

    assert "Time spent recording at run time: 0.282 s." in text("metrics/frame-0-0.html")
    assert "Re-recordings are counted from TORCH_LOGS=cudagraphs text logs only" in text(
        "metrics/index.html"
    )
    recorded = text("messages/frame-0-0.html")
    assert "1 re-recordings" in recorded and "static input data pointer changed." in recorded
    assert "mutated inputs (1 instances)" in text("messages/frame-1-0.html")
    assert "CUDA graphs skipped" in text("messages/index.html")
