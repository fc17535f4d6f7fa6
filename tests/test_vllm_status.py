"""The status of vLLM's compile, the same in every view: with vLLM's ahead-of-time
compile only Dynamo's capture carries the compile id, and the compilation metrics follow
vLLM's pieces without one.  The capture is not "missing" and the records without a compile
id are not "empty": the model, the overview (glance, compiles table, badges) and
``summary`` (text and JSON) read the status from those metrics, as the frame page says.
A log whose ``[0/0]`` really logged no metrics keeps "missing"."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.glance import triage
from sphinx_torchtrace.trace.analyses.status import attempts_status

from . import vllm_oracle as oracle
from .conftest import DATA, page_words

CAPTURED = DATA / "captured"
REUSE = CAPTURED / "vllm_reuse" / "dedicated_log_torch_trace_rank_0_0jxlnkb9.log"
TWO = CAPTURED / "vllm_two_calls" / "dedicated_log_torch_trace_rank_0_9zbb6lod.log"
SHARED = DATA / "vllm" / "dedicated_log_torch_trace_rank_0_2dk9f86k.log"
#: Without vLLM's ahead-of-time compile: the capture's metrics are its own.
NO_AOT = CAPTURED / "vllm_no_aot" / "dedicated_log_torch_trace_rank_0_nvg7hra4.log"
#: tlparse's input of vLLM's post-grad passes: ``[0/0]`` logged no metrics at all.
INPUTS = DATA / "shared" / "tlparse-inputs" / "from-index-meta-pytorch-newer" / "inputs"
TRULY_MISSING = INPUTS / "vllm_post_grad_diff.log"
AOT_LOGS = [REUSE, TWO, SHARED]


def _summary(path: Path, *args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", "summary", str(path), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout


@pytest.mark.parametrize("log", AOT_LOGS, ids=lambda p: p.parent.name)
def test_the_capture_reads_the_metrics_logged_after_vllms_pieces(log: Path) -> None:
    """Each capture's status comes from the id-less compilation metrics the oracle finds
    after its call's pieces; none is missing, the records without an id are not empty."""
    rank = load_trace(log).ranks[0]
    facts = oracle.facts(log)
    captures = [c for c in rank.compiles if not c.id.is_unknown]
    assert len(captures) == len(facts.calls)
    lines = log.read_text("utf-8").splitlines()
    for c, call in zip(captures, facts.calls, strict=True):
        frame = [n for n in call.metrics_lines if '{"compilation_metrics":' in lines[n - 1]]
        assert frame and [m.line for m in c.metrics_apart] == frame
        assert c.status == attempts_status(rank, c) == "ok"
    [unknown] = [c for c in rank.compiles if c.id.is_unknown]
    assert unknown.status == "ok"  # its metrics name no graph: no "empty"


@pytest.mark.parametrize("log", AOT_LOGS, ids=lambda p: p.parent.name)
def test_summary_text_and_json_say_ok(log: Path) -> None:
    ids = len({c.id for c in load_trace(log).ranks[0].compiles if not c.id.is_unknown})
    data = json.loads(_summary(log, "--json"))
    assert data["statuses"] == {"ok": ids}
    text = _summary(log)
    assert re.search(rf"^compile ids:\s+{ids} \({ids} ok\)$", text, re.M), text
    assert triage(load_trace(log)).statuses == {"ok": ids}


def test_a_capture_with_its_own_metrics_keeps_them() -> None:
    rank = load_trace(NO_AOT).ranks[0]
    for c in rank.compiles:
        assert not c.metrics_apart
        if c.id.is_unknown:
            continue
        assert c.status == "ok"


def test_a_compile_that_logged_no_metrics_stays_missing() -> None:
    if not TRULY_MISSING.is_file():
        pytest.skip("tlparse's inputs are not here")
    rank = load_trace(TRULY_MISSING).ranks[0]
    [c] = [c for c in rank.compiles if not c.id.is_unknown]
    assert c.status == attempts_status(rank, c) == "missing" and not c.metrics_apart


def test_the_overview_and_badges_agree_with_the_frame_page(
    built_site: Callable[..., SphinxTestApp],
) -> None:
    """The overview's glance and compiles table, and every badge of the capture and of the
    records without a compile id, in the whole site: ok, never missing or empty."""
    site = built_site("vllm", "html")
    root = Path(site.outdir) / "torchtrace" / "cold"
    index = page_words(root / "index.html")
    assert "missing" not in index.split("This is the")[0]
    [metrics] = [c for c in load_trace(SHARED).ranks[0].compiles if c.metrics_apart]
    said = (
        "1 compile id, 1 attempt): 1 ok (1 of them Dynamo's capture for vLLM's compile, whose "
        "compilation metrics vLLM logged without a compile id, after its pieces: line "
        f"{metrics.metrics_apart[0].line})"
    )
    assert said in index, index[:1500]
    assert "Compilations 1 compile id (1 attempt): 1 ok" in index
    for page in root.glob("*.html"):
        html = page.read_text("utf-8").split('id="status-legend"')[0]  # the legend lists all
        assert "torchtrace-status-missing" not in html, page.name
        assert "torchtrace-status-empty" not in html, page.name
    frame = page_words(root / "frame-0-0.html").split("Trace:", 1)[0]
    assert "ok Dynamo captured a graph and the backend compiled it" in frame
