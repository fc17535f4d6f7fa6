"""Autotuning per compile on a real log.

``tests/data/captured/autotuning`` (``tests/capture/autotuning.py``, torch 2.13 CPU): an MLP
compiled with ``mode="max-autotune"`` and freezing, each Linear a ``packed_linear`` template
benchmarked against MKL with the choices' stats logged (``[0/0]``), then a matmul of two
inputs that Inductor does not autotune (``[1/0]``).  The oracle reads the log's lines itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace import cli
from sphinx_torchtrace.trace import RankTrace, load_trace
from sphinx_torchtrace.trace.analyses.autotuning import autotuning, of_compile

from .conftest import DATA, page_words, warnings_of

LOG = DATA / "captured" / "autotuning" / "dedicated_log_torch_trace_y83871bt.log"


@cache
def _rank() -> RankTrace:
    return load_trace(LOG).ranks[0]


def _spans_in_log() -> list[dict[str, object]]:
    """Each ``*_template_autotuning`` span as the log writes it: its two events' payloads."""
    events: list[tuple[int, dict[str, object]]] = []
    lines = LOG.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if '"chromium_event"' not in line:
            continue
        payload = []
        for following in lines[number:]:
            if not following.startswith("\t"):
                break
            payload.append(following[1:])
        data = json.loads("\n".join(payload))
        if str(data["name"]).endswith("_template_autotuning"):
            events.append((number, data))
    spans = []
    for (start_line, begin), (end_line, end) in zip(events[::2], events[1::2], strict=True):
        assert (begin["ph"], end["ph"]) == ("B", "E")
        stats = json.loads(str(end["args"]["autotune_choices_stats"]))  # type: ignore[index]
        spans.append(
            {
                "seconds": (float(end["ts"]) - float(begin["ts"])) / 1e6,  # type: ignore[arg-type]
                "lines": (start_line, end_line),
                "best": stats["best_kernel"],
                "choices": stats["num_choices"],
                "best_ms": stats["best_time"],
            }
        )
    return spans


def test_each_benchmark_is_read_with_its_span_and_winner() -> None:
    expected = _spans_in_log()
    assert len(expected) == 2
    [entry] = autotuning(_rank())
    assert entry.compile.label == "[0/0]"
    got = [
        {
            "seconds": b.seconds,
            "lines": (b.start_line, b.line),
            "best": b.best_kernel,
            "choices": b.choices,
            "best_ms": b.best_ms,
        }
        for b in entry.benchmarks
    ]
    assert got == expected
    assert [b.operation for b in entry.benchmarks] == ["packed_linear", "packed_linear"]
    assert entry.benchmarks[0].shapes == "64x256, 1459233x1, 512x256"


def test_the_total_is_the_compiles_own_metric_and_its_share() -> None:
    entry = of_compile(_rank(), _rank().compile("[0/0]"))
    assert entry is not None
    line = LOG.read_text(encoding="utf-8").splitlines()[entry.total_line - 1]  # type: ignore[operator]
    assert '"compilation_metrics"' in line
    micros = re.search(r'"compile_time_autotune_time_us": (\d+)', line)
    frame = re.search(r'"entire_frame_compile_time_s": ([0-9.]+)', line)
    assert micros and frame
    assert entry.total_seconds == int(micros.group(1)) / 1e6
    assert entry.share == entry.total_seconds / float(frame.group(1))
    assert entry.notable  # 13.4 s of 62.8 s
    # the metric adds the spans up (whole microseconds each): benchmarking and precompiling
    spans = sum(b.seconds + (b.precompile_seconds or 0) for b in entry.benchmarks)
    assert abs(spans - entry.total_seconds) <= 1e-6 * 2 * len(entry.benchmarks)


def test_a_compile_that_autotuned_nothing_has_no_entry() -> None:
    assert of_compile(_rank(), _rank().compile("[1/0]")) is None
    # the corpus's other logs: a metric of 0 and no span is no autotuning
    simple = next((DATA / "shared").rglob("simple/*.log"), None)
    if simple is not None:
        assert autotuning(load_trace(Path(simple)).ranks[0]) == []


@pytest.fixture(scope="module")
def site(built_site: Callable[..., SphinxTestApp]) -> SphinxTestApp:
    return built_site("autotuning", "html")


def test_the_compile_page_lists_each_benchmark(site: SphinxTestApp) -> None:
    assert warnings_of(site) == ""
    folder = site.outdir / "torchtrace" / "autotuning"
    page = page_words(folder / "frame-0-0.html")
    entry = of_compile(_rank(), _rank().compile("[0/0]"))
    assert entry is not None and entry.share is not None
    assert (
        f"Inductor benchmarked 2 operations for this compile: {entry.seconds:.3f} s of "
        f"autotuning ( compile_time_autotune_time_us , line {entry.total_line}), "
        f"{entry.share:.0%} of this compile's {entry.compile_seconds:.3f} s." in page
    )
    for b in entry.benchmarks:
        assert f"{b.best_kernel} {b.best_ms:.4f} ms {b.seconds:.3f} s" in page
        assert f"{b.start_line}–{b.line}" in page
    assert "Autotuning" not in page_words(folder / "frame-1-0.html")  # nothing benchmarked there
    glance = page_words(folder / "index.html")
    assert f"Autotuning: {entry.seconds:.1f} s ({entry.share:.0%}) in [0/0]" in glance


def test_no_glance_line_without_autotuning(built_site: Callable[..., SphinxTestApp]) -> None:
    simple = built_site("simple", "html")
    assert "Autotuning" not in page_words(simple.outdir / "torchtrace" / "simple" / "index.html")


def test_summary_says_it_in_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["summary", "--json", str(LOG)]) == 0
    [data] = json.loads(capsys.readouterr().out)["autotuning"]
    entry = of_compile(_rank(), _rank().compile("[0/0]"))
    assert entry is not None
    assert data["compile"] == "[0/0]" and data["metric_line"] == entry.total_line
    assert data["seconds"] == entry.seconds and data["share"] == entry.share
    assert [b["lines"] for b in data["benchmarks"]] == [
        [b.start_line, b.line] for b in entry.benchmarks
    ]
    assert cli.main(["summary", str(LOG)]) == 0
    text = capsys.readouterr().out
    assert (
        f"autotuning:     {entry.seconds:.2f} s in 1 compile(s), 2 operation(s) benchmarked; "
        f"[0/0] spent {entry.share:.0%} of its compile time on it" in text
    )
    simple = next((DATA / "shared").rglob("simple/*.log"))
    assert cli.main(["summary", "--json", str(simple)]) == 0
    assert "autotuning" not in json.loads(capsys.readouterr().out)
