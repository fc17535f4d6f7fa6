"""vLLM's piecewise compiles on real vLLM 0.32 logs (``tests/data/vllm``): the matrix is the
capture's own oracle (``facts.json``), the page builds without a warning, ``summary`` says
the figures, and the glance stops calling the compile missing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace import cli
from sphinx_torchtrace.site.pages.overview.view import seconds_text
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses import vllm

from .conftest import DATA, SiteMaker, page_words, warnings_of

VLLM = DATA / "vllm"
COLD = VLLM / "dedicated_log_torch_trace_rank_0_2dk9f86k.log"
WARM = VLLM / "warm" / "dedicated_log_torch_trace_rank_0_uzoer41p.log"


@cache
def _view(path: Path) -> vllm.VllmView:
    view = vllm.vllm_view(load_trace(path).ranks[0])
    assert view is not None
    return view


def _facts(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((path.parent / "facts.json").read_text(encoding="utf-8"))
    return data


def test_cold_matrix_is_the_captures_facts() -> None:
    view, facts = _view(COLD), _facts(COLD)
    [call] = view.calls
    assert len(call.pieces) == len(facts["compiles"]) == 9
    for piece, fact in zip(call.pieces, facts["compiles"], strict=True):
        assert piece.line == fact["line"]
        assert piece.submod == fact["submod"]
        assert list(piece.range or ()) == fact["range"]
        assert piece.single_size == fact["single_size"]
        assert piece.capture_size == fact["is_cudagraph_capture_size"]
        assert [e.artifact for e in piece.cache] == fact["cache"]
        assert piece.output_code is not None
        assert vllm.code_file(piece.output_code) == fact["output_code"]["filename"]
        assert piece.output_code.line == fact["output_code"]["line"]
        assert piece.kernels == fact["output_code"]["kernels"]
        assert piece.inductor is not None and piece.inductor.seconds is not None
        assert round(piece.inductor.seconds, 3) == fact["inductor_compile_s"]
        assert piece.wall_seconds is not None and round(piece.wall_seconds, 3) == fact["wall_s"]
        graph = fact["graph_dump"]
        shown = (piece.graph.name, piece.graph.line) if piece.graph is not None else None
        assert shown == ((graph["name"], graph["line"]) if graph else None)
        assert not piece.reused
    matrix = view.matrix(call)
    assert matrix.ranges == [(1, 16), (4, 4), (17, 128)]  # numeric order, the size marked
    assert matrix.submods == ["submod_0", "submod_2", "submod_4"]
    assert matrix.containing((4, 4)) == (1, 16)
    per_range = {vllm.range_text(r): round(matrix.row_seconds(r) or 0, 2) for r in matrix.ranges}
    assert per_range == {"[1, 16]": 29.3, "size 4": 66.22, "[17, 128]": 5.59}  # the README's
    per_subgraph = {s: round(matrix.column_seconds(s) or 0, 2) for s in matrix.submods}
    assert per_subgraph == {"submod_0": 65.42, "submod_2": 27.82, "submod_4": 7.87}
    slowest = matrix.slowest
    assert slowest is not None and (slowest.submod, slowest.range) == ("submod_0", (4, 4))
    assert call.split is not None and call.split.line == facts["split"]["line"]
    assert call.submods == facts["split"]["submods"]


def test_cold_headline_split_and_config() -> None:
    view, facts = _view(COLD), _facts(COLD)
    [call] = view.calls
    assert call.mode == "VLLM_COMPILE (3)"
    assert call.settings == facts["config"]
    assert view.startup == "cold" and not view.reused and not view.loads
    assert view.backend_seconds is not None and round(view.backend_seconds, 3) == 101.178
    assert view.ids_missing and view.compile_ids == ["[0/0]"] and not view.dynamo_start
    # the ops that really split the graph, from the execution code, not the 19 candidates
    inlined = {
        f"submod_{k.rsplit('_', 1)[1]}": sorted(v)
        for k, v in facts["execution_code_inlined_ops"].items()
    }
    assert {k: sorted(v) for k, v in call.split_ops.items()} == inlined
    assert len(call.candidates) == 19
    assert all(call.op_is_candidate(op) for op in call.split_op_names)
    # vLLM appends max_num_batched_tokens to the endpoints: two ranges and a size
    assert call.ranges_endpoints == ("compile_ranges_endpoints", ["16", "128"])
    # what follows the last compile is the call's, not the last subgraph's
    assert [getattr(r, "name", getattr(r, "event", "")) for r in call.after] == [
        "vllm_execution_code",
        "dynamo_cpp_guards_str",
        "compilation_metrics",
        "compilation_metrics_runtime",
    ]


def test_token_count_guards_are_checked_against_the_ranges() -> None:
    symbol = _view(COLD).symbol
    assert symbol is not None
    assert (symbol.symbol, symbol.line, symbol.value_range) == ("s72", 129, "[2, int_oo]")
    assert symbol.aliases == ["s80"]  # Eq(s80, s72) at line 174
    verdicts = {g.expr: (g.line, g.cuts, g.verdict) for g in symbol.guards}
    assert verdicts["4*s72 <= 512"][:2] == (134, False)
    assert "≤ 128" in verdicts["4*s72 <= 512"][2]  # = max_num_batched_tokens: fits
    assert not any(g.cuts for g in symbol.guards)


def test_warm_log_gives_loads_that_map_back_to_the_cold_cells() -> None:
    warm, cold, facts = _view(WARM), _view(COLD), _facts(WARM)
    assert facts["compiles"] == [] and not warm.pieces  # the warm matrix is empty, as logged
    assert warm.startup == "warm" and len(warm.loads) == 9
    assert all(load.cache_text == "fx_graph_bundled hit" for load in warm.loads)
    span = warm.load_span
    assert span is not None and span.seconds is not None
    assert (span.begin_line, span.end_line, round(span.seconds, 2)) == (534, 9484, 12.95)
    inlined = {
        f"submod_{k.rsplit('_', 1)[1]}": sorted(v)
        for k, v in facts["execution_code_inlined_ops"].items()
    }
    assert {k: sorted(v) for k, v in warm.calls[0].split_ops.items()} == inlined
    mapped = vllm.map_loads(warm, cold)
    assert len(mapped) == 9  # every load is one cold cell, found by its output code file
    first = mapped[warm.loads[0].line]
    assert (first.submod, first.range) == ("submod_2", (17, 128))  # loaded first


def test_summary_json_has_the_vllm_figures() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", "summary", str(COLD), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    [data] = json.loads(out)["vllm"]
    assert data["start"] == "cold" and data["compiles"] == 9 and data["reused"] == 0
    assert round(data["compile_seconds"], 2) == 101.18
    [call] = data["calls"]
    assert call["backend_lines"] == [818, 28369]
    assert [p["line"] for p in call["pieces"]] == [c["line"] for c in _facts(COLD)["compiles"]]
    assert call["slowest"]["line"] == 1393
    text = subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", "summary", str(WARM)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    assert re.search(r"^vllm: +warm start, 9 loaded, 12\.95 s \(loading\)$", text, re.M)


@pytest.fixture(scope="module")
def site(built_site: Callable[..., SphinxTestApp]) -> SphinxTestApp:
    return built_site("vllm", "html")


def test_the_vllm_pages_build_without_a_warning(site: SphinxTestApp) -> None:
    assert warnings_of(site) == ""
    cold = page_words(site.outdir / "torchtrace" / "cold" / "vllm.html")
    assert "Ranges and sizes × subgraphs" in cold
    assert "53.42 s slowest (Inductor 51.56 s, aotautograd miss, 2 kernels, line 1393)" in cold
    assert "101.10 s (Inductor 87.15 s)" in cold  # the matrix's total
    assert "vllm.unified_attention_with_output" in cold
    assert "The config lists 19 candidate splitting ops; 2 of them split this graph." in cold
    warm = page_words(site.outdir / "torchtrace" / "warm" / "vllm.html")
    assert "9 pieces loaded from a cache" in warm and "Loading took 12.95 s" in warm


def test_the_glance_links_vllm_and_calls_nothing_missing(site: SphinxTestApp) -> None:
    index = (site.outdir / "torchtrace" / "cold" / "index.html").read_text(encoding="utf-8")
    glance = page_words(site.outdir / "torchtrace" / "cold" / "index.html").split("This is the")[0]
    assert "vLLM: cold start, 9 piecewise compiles" in glance
    assert "Compile time: 101.2 s" in glance
    assert "missing" not in glance
    assert 'href="vllm.html"' in index
    outside = page_words(site.outdir / "torchtrace" / "cold" / "frame-none.html")
    assert "not a compile of its own" not in outside
    assert "These records hold vLLM's compile" in outside


def test_unknown_vllm_records_and_fields_are_kept(tmp_path: Path) -> None:
    """A newer vLLM's record (``vllm_compile_event``, tlparse's #178) and a field this
    module does not read are listed as logged, never dropped."""
    lines = COLD.read_text(encoding="utf-8").split("\n")
    start = lines[1393]  # the first compile start's payload (line 1394 of the log)
    assert start.startswith('\t{"piecewise_index": 0')
    lines[1393] = start[:-1] + ', "compile_range_kind": "size"}'
    event = (
        'V1201 21:18:35.872000 26197 vllm/compilation/backends.py:1] {"artifact": '
        '{"name": "vllm_compile_event", "encoding": "json"}, "rank": 0, "has_payload": '
        '"00000000000000000000000000000000"}'
    )
    lines[1394:1394] = [event, '\t{"type": "fresh_compile"}']
    log = tmp_path / "dedicated_log_torch_trace_rank_0_edited.log"
    log.write_text("\n".join(lines), encoding="utf-8")
    view = vllm.vllm_view(load_trace(log).ranks[0])
    assert view is not None
    first = view.pieces[0]
    assert first.other_fields == {"compile_range_kind": "size"}
    assert [(a.name, a.line) for a in view.unknown] == [("vllm_compile_event", 1395)]
    assert len(view.compiled) == 9  # the matrix is unchanged by them


def test_a_comparison_and_a_trend_read_the_vllm_view(
    make_site: SiteMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """vLLM's pieces have no compile ids, so the frames a comparison matches miss them:
    the comparison and the trend say each run's vLLM line, cold beside warm."""
    cold, warm = _view(COLD), _view(WARM)
    assert cli.main(["diff", "--json", str(COLD), str(WARM)]) in (0, 1)
    [rank] = json.loads(capsys.readouterr().out)["ranks"]
    assert rank["vllm"]["baseline"]["compiles"] == len(cold.compiled) == 9
    assert rank["vllm"]["new"]["loaded"] == len(warm.loads) == 9
    cli.main(["diff", str(COLD), str(WARM)])
    text = capsys.readouterr().out
    assert f"vllm: {vllm.summary_text(cold)} -> {vllm.summary_text(warm)}" in text
    cli.main(["diff", str(COLD), str(WARM), str(COLD)])
    text = capsys.readouterr().out
    assert f"vllm {WARM}: {vllm.summary_text(warm)}" in text
    at = "@DATA@/vllm"
    page = (
        f"Runs\n====\n\n.. torchtrace-diff:: {at}/{COLD.name} {at}/warm/{WARM.name}\n   :name: cw\n"
    )
    app = make_site("simple", "html", pages={"index.rst": page})
    assert "torchtrace.read" not in warnings_of(app)
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert "vLLM (noisy times)" in html and "warm start, 9 loaded" in html


def test_where_the_compile_time_went_reads_vllm_spans(
    built_site: Callable[..., SphinxTestApp],
) -> None:
    """vLLM's pieces have no compile ids: the compile-time section gives their times by
    range and subgraph from vLLM's own spans (the cold log), and the loads of the warm."""
    site = built_site("vllm", "html")
    pages = {
        p: " ".join(re.sub(r"<[^>]+>", " ", p.read_text(encoding="utf-8")).split())
        for p in (site.outdir / "torchtrace").rglob("index.html")
    }
    cold = _view(COLD)
    wall = sum(p.wall_seconds or 0.0 for p in cold.pieces)
    said = [t for t in pages.values() if "vLLM logged its piecewise compiles" in t]
    assert said, "the cold log's overview"
    assert f"its {len(cold.pieces)} pieces took {seconds_text(wall)} from" in said[0]
    for piece in cold.pieces:
        assert f"line {piece.line}" in said[0]
    warm = _view(WARM)
    assert warm.load_span is not None
    assert any(f"it loaded {len(warm.loads)} pieces from its cache" in t for t in pages.values())
