"""vLLM's view on real captures unlike the shared one (``tests/data/captured/vllm_*``, see
their README): a 4-layer Qwen2 whose middle layers vLLM reuses in-process, two compile calls
in one log, and each one's warm start.  Every figure is checked against
:mod:`tests.vllm_oracle`, which reads the logs' records in order itself: the view, the page,
``summary --json``, the glance, a comparison of cold and warm, and the pages of the Dynamo
capture (``[0/0]``) and of the records without a compile id."""

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

from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses import vllm

from . import vllm_oracle as oracle
from .conftest import DATA, page_words, warnings_of

CAPTURED = DATA / "captured"
REUSE = CAPTURED / "vllm_reuse" / "dedicated_log_torch_trace_rank_0_0jxlnkb9.log"
REUSE_WARM = CAPTURED / "vllm_reuse" / "warm" / "dedicated_log_torch_trace_rank_0_qqjyvds1.log"
TWO = CAPTURED / "vllm_two_calls" / "dedicated_log_torch_trace_rank_0_9zbb6lod.log"
TWO_WARM = CAPTURED / "vllm_two_calls" / "warm" / "dedicated_log_torch_trace_rank_0_mjnchoso.log"
#: The same two models as TWO, with VLLM_USE_AOT_COMPILE=0: records carry compile ids, and
#: the warm start logs compile starts each followed by a load from vLLM's cache.
NO_AOT = CAPTURED / "vllm_no_aot" / "dedicated_log_torch_trace_rank_0_nvg7hra4.log"
NO_AOT_WARM = CAPTURED / "vllm_no_aot" / "warm" / "dedicated_log_torch_trace_rank_0_l3yu64ly.log"
COLD_LOGS = [REUSE, TWO, NO_AOT]
WARM_LOGS = [REUSE_WARM, TWO_WARM]


@cache
def _view(path: Path) -> vllm.VllmView:
    view = vllm.vllm_view(load_trace(path).ranks[0])
    assert view is not None
    return view


@cache
def _facts(path: Path) -> oracle.Facts:
    return oracle.facts(path)


def _summary(path: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", "summary", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    [data] = json.loads(out)["vllm"]
    assert isinstance(data, dict)
    return data


def _source(call: oracle.Call, piece: oracle.Piece) -> oracle.Piece | None:
    """The source the log shows for a reused piece: its one graph twin, else none."""
    twins = oracle.graph_twins(call, piece)
    return twins[0] if len(twins) == 1 else None


# --------------------------------------------------------------------------- the view


def _warm_files(facts: oracle.Facts) -> dict[str, int]:
    """A warm log's output code files and their lines: its loads, else (compile starts
    followed by cache hits) its loaded pieces'."""
    found = {name: line for line, name in facts.loads}
    for p in facts.pieces:
        if p.loaded and p.output_code is not None and p.output_code_line is not None:
            found.setdefault(p.output_code, p.output_code_line)
    return found


@pytest.mark.parametrize(
    "log", [*COLD_LOGS, NO_AOT_WARM], ids=["reuse", "two_calls", "no_aot", "no_aot_warm"]
)
def test_each_compile_start_is_the_oracles(log: Path) -> None:
    """Per call, each compile start: compiled or reused, its cache lookups, output code,
    kernels, wall and Inductor time; a reused piece's source only where one earlier piece
    of its range has its graph."""
    view, facts = _view(log), _facts(log)
    assert [c.line for c in view.shown_calls] == [c.line for c in facts.calls]
    for call, fact in zip(view.shown_calls, facts.calls, strict=True):
        assert call.settings == fact.config
        assert call.split is not None and call.split.line == fact.split_line
        assert call.submods == fact.submods
        assert call.backend is not None and call.backend.seconds is not None
        assert fact.backend is not None
        assert (call.backend.begin_line, call.backend.end_line) == fact.backend[:2]
        assert call.backend.seconds == pytest.approx(fact.backend[2], abs=1e-6)
        assert [m.line for m in call.compile_metrics][:1] == fact.metrics_lines[:1]
        assert len(call.pieces) == len(fact.pieces)
        for piece, p in zip(call.pieces, fact.pieces, strict=True):
            assert (piece.line, piece.submod, piece.range) == (p.line, p.submod, p.range)
            assert piece.reused is not p.compiled
            assert piece.loaded is p.loaded
            assert [e.artifact for e in piece.cache] == p.cache
            code = piece.output_code
            assert (vllm.code_file(code) if code else None) == p.output_code
            assert piece.kernels == p.kernels
            inductor = piece.inductor.seconds if piece.inductor is not None else None
            assert inductor == pytest.approx(p.inductor_s, abs=1e-6)
            assert piece.wall_seconds == pytest.approx(p.wall_s, abs=1e-6)
            if piece.reused:
                source = _source(fact, p)
                shown = piece.source.line if piece.source is not None else None
                assert shown == (source.line if source is not None else None)


def test_the_middle_layers_are_reused_from_the_first() -> None:
    """What vLLM's stdout says ("15 entries, 9 artifacts"): 6 of 15 starts compile nothing,
    each the second or third middle layer, reusing the first middle layer's compile."""
    view = _view(REUSE)
    assert (len(view.pieces), len(view.compiled), len(view.reused)) == (15, 9, 6)
    assert {p.submod for p in view.reused} == {"submod_4", "submod_6"}
    for p in view.reused:
        assert p.source is not None
        assert (p.source.submod, p.source.range) == ("submod_2", p.range)
    [call] = view.shown_calls
    matrix = view.matrix(call)
    assert matrix.submods == ["submod_0", "submod_2", "submod_4", "submod_6", "submod_8"]
    assert matrix.ranges == [(1, 8), (2, 2), (9, 64)]


def test_two_calls_are_two_sections_with_the_shared_config_apart() -> None:
    view, facts = _view(TWO), _facts(TWO)
    first, second = view.shown_calls
    assert [view.call_label(c) for c in view.shown_calls] == [
        f"{f.label} ({f.config['model']})" for f in facts.calls
    ]
    shared = view.shared_settings()
    one, two = (f.config for f in facts.calls)
    assert shared == {k: v for k, v in one.items() if two.get(k) == v}
    assert "compile_ranges_endpoints" not in shared and "model" not in shared
    # the second model's Dynamo capture is logged after the first call: not the first's
    events = [getattr(r, "event", "") for r in first.after]
    assert "dynamo_output_graph" not in events
    assert [m.line for m in first.compile_metrics] == facts.calls[0].metrics_lines
    assert [p.submod for p in second.pieces if p.reused] == ["submod_4", "submod_4"]


@pytest.mark.parametrize("log", WARM_LOGS, ids=["reuse", "two_calls"])
def test_warm_loads_per_model_and_their_time(log: Path) -> None:
    """A warm log's loads, grouped by the model that loaded them; the loading time sums
    each model's span (the time between two models' loads is no loading)."""
    view, facts = _view(log), _facts(log)
    assert view.warm and not view.pieces
    assert [(x.line, x.filename) for x in view.loads] == facts.loads
    groups = [([(x.line, x.filename) for x in g.loads], g.span) for g in view.load_groups]
    assert [g for g, _ in groups] == [g for g, _ in facts.load_groups]
    for (_, span), (_, fact) in zip(groups, facts.load_groups, strict=True):
        assert span is not None and fact is not None
        assert (span.begin_line, span.end_line) == fact[:2]
        assert span.seconds == pytest.approx(fact[2], abs=1e-6)
    assert view.load_seconds == pytest.approx(sum(s[2] for _, s in facts.load_groups if s))


@pytest.mark.parametrize(
    ("cold", "warm"), [(REUSE, REUSE_WARM), (TWO, TWO_WARM), (NO_AOT, NO_AOT_WARM)]
)
def test_each_warm_load_maps_to_its_cold_cell(cold: Path, warm: Path) -> None:
    """Given the cold log, each warm load is a cell (by its output code file); a cell the
    cold run reused is served by its source's file."""
    cells = vllm.map_cells(_view(cold), _view(warm))
    facts = _facts(cold)
    loaded = _warm_files(_facts(warm))
    pieces = facts.pieces
    assert [c.piece.line for c in cells] == [p.line for p in pieces]
    for cell, p in zip(cells, pieces, strict=True):
        call = next(c for c in facts.calls if p in c.pieces)
        source = p if p.compiled else _source(call, p)
        want = loaded.get(source.output_code or "") if source is not None else None
        assert (cell.load.line if cell.load is not None else None) == want
    assert all(c.load is not None for c in cells)  # every cell of these runs is loaded


# --------------------------------------------------------------------------- summary


def test_summary_json_says_the_oracles_figures() -> None:
    for log in COLD_LOGS:
        data, facts = _summary(log), _facts(log)
        assert data["start"] == "cold"
        assert data["compiles"] == sum(p.compiled for p in facts.pieces)
        assert data["reused"] == sum(not p.compiled for p in facts.pieces)
        backends = [c.backend[2] for c in facts.calls if c.backend]
        assert data["compile_seconds"] == pytest.approx(sum(backends), abs=1e-6)
        assert [c["line"] for c in data["calls"]] == [c.line for c in facts.calls]
        assert [c["prefix"] for c in data["calls"]] == [c.config["prefix"] for c in facts.calls]
        for call, fact in zip(data["calls"], facts.calls, strict=True):
            assert [(p["line"], p["reused"]) for p in call["pieces"]] == [
                (p.line, not p.compiled) for p in fact.pieces
            ]
        assert data["compile_calls"] == len(facts.calls)
    data, facts = _summary(NO_AOT_WARM), _facts(NO_AOT_WARM)
    assert data["start"] == "warm" and data["compiles"] == 0
    assert data["loaded"] == sum(p.loaded for p in facts.pieces) == 9
    assert data["reused"] == sum(not p.compiled for p in facts.pieces) == 2
    data, facts = _summary(TWO_WARM), _facts(TWO_WARM)
    assert data["start"] == "warm" and data["loaded"] == len(facts.loads) == 9
    assert data["compile_calls"] == len(facts.load_groups) == 2
    spans = [s for _, s in facts.load_groups if s is not None]
    assert data["load_seconds"] == pytest.approx(sum(s[2] for s in spans), abs=1e-6)
    assert [g["lines"] for g in data["load_groups"]] == [list(s[:2]) for s in spans]


# --------------------------------------------------------------------------- pages


@pytest.fixture(scope="module")
def site(built_site: Callable[..., SphinxTestApp]) -> SphinxTestApp:
    return built_site("vllm-captures", "html")


def _page(site: SphinxTestApp, name: str, page: str) -> str:
    return page_words(Path(site.outdir) / "torchtrace" / name / page)


def test_the_pages_build_without_a_warning(site: SphinxTestApp) -> None:
    """Two compile calls on one page: each call's sections have anchors of their own."""
    assert warnings_of(site) == ""


def test_the_page_names_reused_pieces_and_their_source(site: SphinxTestApp) -> None:
    words, facts = _page(site, "reuse", "vllm.html"), _facts(REUSE)
    [call] = facts.calls
    for p in call.pieces:
        if p.compiled:
            continue
        source = _source(call, p)
        assert source is not None
        assert f"reused, probably {source.submod}'s (line {p.line})" in words
        assert f"(compile start at line {p.line}): no compile record follows" in words
        assert f"Probably {vllm.range_text(source.range).join([source.submod + ' ', ''])}'s " in (
            words
        )
        assert f"(compile start at line {source.line})" in words
    total = sum(p.wall_s or 0.0 for p in call.pieces)
    inductor = sum(p.inductor_s or 0.0 for p in call.pieces)
    assert f"{total:.2f} s (Inductor {inductor:.2f} s)" in words  # the matrix's total
    assert "cold: 9 piecewise compiles of 3 subgraphs; 6 reused in-process" in words


def test_each_compile_call_is_a_section(site: SphinxTestApp) -> None:
    words, facts = _page(site, "two", "vllm.html"), _facts(TWO)
    for i, call in enumerate(facts.calls):
        title = f"Compile call {i + 1}: {call.label} ({call.config['model']}) (line {call.line})"
        assert title in words
        section = words.split(title, 1)[1].split("Compile call", 1)[0]
        total = sum(p.wall_s or 0.0 for p in call.pieces)
        inductor = sum(p.inductor_s or 0.0 for p in call.pieces)
        assert f"{total:.2f} s (Inductor {inductor:.2f} s)" in section  # the call's total
    assert "Config shared by the compile calls" in words
    shared = words.split("Config shared by the compile calls", 1)[1].split("Compile call 1")[0]
    assert "splitting_ops" in shared and "compile_ranges_endpoints" not in shared
    first = words.split("Compile call 1", 1)[1].split("Compile call 2")[0]
    assert "compile_ranges_endpoints 32 ranges [1, 32]" in first
    assert "splitting_ops" not in first.split("Config that shapes compilation", 1)[1]
    assert "dynamo_output_graph" not in first.split("After the piecewise compiles", 1)[1]
    html = (Path(site.outdir) / "torchtrace" / "two" / "vllm.html").read_text(encoding="utf-8")
    anchors = re.findall(r'<section id="(vllm-[a-z-]+-?\d*)"', html)
    assert len(anchors) == len(set(anchors)) and "vllm-matrix-2" in anchors


def test_a_warm_page_says_each_models_loads(site: SphinxTestApp) -> None:
    words, facts = _page(site, "two-warm", "vllm.html"), _facts(TWO_WARM)
    spans = [s for _, s in facts.load_groups if s is not None]
    assert f"Load time: {sum(s[2] for s in spans):.2f} s" in words
    for s in spans:
        assert f"Loading took {s[2]:.2f} s, from the first" in words
        assert f"(line {s[0]}) to the last end (line {s[1]})" in words
    assert "Model 2, vllm_execution_code at line 9598: 6 loads." in words


def test_the_glance_states_vllms_figures(site: SphinxTestApp) -> None:
    for name, log in (("reuse", REUSE), ("two", TWO)):
        glance = _page(site, name, "index.html").split("This is the")[0]
        facts = _facts(log)
        compiled = sum(p.compiled for p in facts.pieces)
        reused = len(facts.pieces) - compiled
        calls = f"{len(facts.calls)} compile calls, " if len(facts.calls) > 1 else ""
        assert f"vLLM: cold start, {calls}{compiled} piecewise compiles, {reused} reused" in glance
        seconds = sum(c.backend[2] for c in facts.calls if c.backend)
        assert f"Compile time: {seconds:.1f} s (vLLM's backend" in glance
        assert "missing" not in glance
    glance = _page(site, "two-warm", "index.html").split("This is the")[0]
    spans = [s for _, s in _facts(TWO_WARM).load_groups if s is not None]
    assert f"Compile time: {sum(s[2] for s in spans):.1f} s" in glance


@pytest.mark.parametrize(
    ("which", "cold", "warm"), [(1, REUSE, REUSE_WARM), (2, NO_AOT, NO_AOT_WARM)]
)
def test_a_comparison_maps_each_warm_load_to_its_cold_cell(
    site: SphinxTestApp, which: int, cold: Path, warm: Path
) -> None:
    words = page_words(Path(site.outdir) / "index.html")
    part = words.split("vLLM (noisy times)")[which]
    facts, loaded = _facts(cold), _warm_files(_facts(warm))
    assert f"{len(facts.pieces)} of the {len(facts.pieces)} cells were found" in part
    pieces = [(call, p) for call in facts.calls for p in call.pieces]
    for call, p in pieces:
        source = p if p.compiled else _source(call, p)
        assert source is not None and source.output_code is not None
        line = loaded[source.output_code]
        if p.compiled:
            assert f"line {p.line}, {p.wall_s:.2f} s line {line} (its output code" in part
        else:
            said = f"line {p.line}: reused, probably the piece at line {source.line}"
            code = f"(the output code of its source {source.output_code}"
            assert f"{said} line {line} {code}" in part


# --------------------------------------------------------------------------- [0/0]


@pytest.mark.parametrize(("name", "frame", "call"), [("reuse", "0-0", 0), ("two", "1-0", 1)])
def test_the_dynamo_capture_page_says_what_vllm_did_with_it(
    site: SphinxTestApp, name: str, frame: str, call: int
) -> None:
    """The Dynamo part of vLLM's compile carries the compile id, its metrics do not: its
    page says the capture vLLM split and compiled, not "missing"."""
    words = _page(site, name, f"frame-{frame}.html")
    facts = _facts(REUSE if name == "reuse" else TWO)
    fact = facts.calls[call]
    head = words.split("Trace:", 1)[0]
    assert "No compilation metrics were logged" not in head and "it is not missing" in head
    assert f"vllm_piecewise_split_graph , line {fact.split_line}" in head
    compiled = sum(p.compiled for p in fact.pieces)
    said = f"{len(fact.pieces)} compile starts over {len(set(p.submod for p in fact.pieces))}"
    assert f"{said} subgraphs, {compiled} compiled" in head
    assert f"compilation_metrics, line {fact.metrics_lines[0]}" in head
    html = (Path(site.outdir) / "torchtrace" / name / f"frame-{frame}.html").read_text("utf-8")
    status = html.split('role="main"', 1)[1].split("Trace:", 1)[0]
    assert 'href="vllm.html"' in status and 'href="frame-none.html' in status
    assert "torchtrace-status-missing" not in status  # no "missing" badge


def test_with_compile_ids_the_capture_page_keeps_its_status_and_links_vllm(
    site: SphinxTestApp,
) -> None:
    """Without vLLM's ahead-of-time compile the Dynamo capture has its own metrics: its
    status stands (ok), and the page says what vLLM did with the graph."""
    facts = _facts(NO_AOT)
    for frame, fact in zip(("0-0", "1-0"), facts.calls, strict=True):
        words = _page(site, "no-aot", f"frame-{frame}.html").split("Function:", 1)[0]
        assert "ok Dynamo captured a graph and the backend compiled it" in words
        label = f"{fact.label} ({fact.config['model']})"
        assert f"Dynamo's capture for vLLM's compile ({label}):" in words
        assert f"vllm_piecewise_split_graph , line {fact.split_line}" in words
        assert "it is not missing" not in words  # its metrics are its own


def test_a_warm_start_with_compile_starts_is_warm(site: SphinxTestApp) -> None:
    """vLLM's own cache (no ahead-of-time compile): each compile start is followed by cache
    hits, not a compile; the page says loaded, and no piece compiled."""
    words, facts = _page(site, "no-aot-warm", "vllm.html"), _facts(NO_AOT_WARM)
    loaded = sum(p.loaded for p in facts.pieces)
    reused = sum(not p.compiled for p in facts.pieces)
    assert f"Start: warm: {loaded} pieces loaded from a cache, none compiled; {reused} reused" in (
        words
    )
    assert words.count("fx_graph hit, loaded, not compiled") == loaded
    glance = _page(site, "no-aot-warm", "index.html").split("This is the")[0]
    assert f"vLLM: warm start, 2 compile calls, {reused} reused, {loaded} pieces loaded" in glance


def test_the_page_without_a_compile_id_says_vllms_pieces(site: SphinxTestApp) -> None:
    words = _page(site, "reuse", "frame-none.html").split("Trace:", 1)[0]
    assert "15 compile starts over 5 subgraphs, 9 compiled, 6 reused in-process" in words
    assert "not a compile of its own" not in words
    words = _page(site, "two", "frame-none.html").split("Trace:", 1)[0]
    assert "2 compile calls: backbone (tiny_mistral): 3 compile starts" in words


def test_the_shared_logs_dynamo_page_is_not_missing(
    built_site: Callable[..., SphinxTestApp],
) -> None:
    """The shared cold log (``tests/data/vllm``): its ``[0/0]`` is Dynamo's capture."""
    site = built_site("vllm", "html")
    words = page_words(Path(site.outdir) / "torchtrace" / "cold" / "frame-0-0.html")
    head = words.split("Trace:", 1)[0]
    assert "Dynamo's capture for vLLM's compile: Dynamo traced this graph" in head
    assert "9 compile starts over 3 subgraphs, 9 compiled" in head
    assert "it is not missing" in head and "No compilation metrics were logged" not in head
