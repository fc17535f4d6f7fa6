"""Fresh traces made with torch 2.13 in this test run (marked ``torch``: ``nox -s tests-torch``).

The bundled logs pin the model; these tests prove it still reads what the
installed torch writes today, including a single-operator program whose
provenance the upstream viewer cannot show.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.provenance import provenance_view
from sphinx_torchtrace.trace.analyses.status import frame_status

pytestmark = pytest.mark.torch

SINGLE_OP = """
import torch
import torch._inductor.config as inductor_config
inductor_config.trace.provenance_tracking_level = 1

@torch.compile
def f(x):
    return torch.relu(x)

f(torch.randn(8, 8))
"""

GRAPH_BREAK = """
import torch

@torch.compile
def f(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos() + 1

f(torch.randn(16))
f(torch.randn(16, 2))
"""


def run_traced(tmp_path: Path, program: str, **env: str) -> Path:
    """Run a program under TORCH_TRACE with its own inductor cache; return the trace dir."""
    pytest.importorskip("torch")
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(program))
    trace_dir = tmp_path / "trace"
    environ = dict(os.environ)
    environ.update(
        TORCH_TRACE=str(trace_dir),
        TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor-cache"),
        **env,
    )
    subprocess.run([sys.executable, str(script)], env=environ, check=True, timeout=600)
    return trace_dir


def test_a_single_operator_still_maps(tmp_path: Path) -> None:
    trace = load_trace(run_traced(tmp_path, SINGLE_OP, INDUCTOR_PROVENANCE="1"))
    assert trace.diagnostics == []
    rank = trace.ranks[0]
    compile_ = rank.compile("[0/0]")
    assert compile_.status == "ok"
    view = provenance_view(compile_)
    assert view is not None
    assert view.pre_to_post == {"relu": ["relu"]}
    maps = view.line_maps
    assert maps["preToPost"] and maps["postToPre"]
    assert maps["pyCodeToPost"] and maps["postToPyCode"]
    code_lines = view.code.text().splitlines() if view.code else []
    for line in maps["pyCodeToPost"]:
        assert "cpp_fused_relu_0" in code_lines[line - 1]


def test_graph_breaks_and_recompiles(tmp_path: Path) -> None:
    trace = load_trace(run_traced(tmp_path, GRAPH_BREAK))
    assert trace.diagnostics == []
    rank = trace.ranks[0]
    assert rank.torch_version and rank.torch_version["pytorch_version"].startswith("2.")
    labels = [c.label for c in rank.compiles if not c.id.is_unknown]
    assert labels[:3] == ["[0/0]", "[0/0_1]", "[1/0]"]
    assert rank.compile("[0/0]").status == "break"
    assert frame_status(rank, rank.compile("[0/0]").id) == "break"
    breaks = [f for c in rank.compiles for f in c.failures if f.kind == "graph_break"]
    assert breaks and breaks[0].user_location and "program.py" in breaks[0].user_location
    recompiled = [c for c in rank.compiles if c.recompile_reasons]
    assert recompiled, "the second call with another shape recompiles"
    kernels = [k for c in rank.compiles for a in c.artifacts for k in a.kernels]
    assert any(k.kind == "cpp" for k in kernels)
