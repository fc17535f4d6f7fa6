"""``diff``'s text output maps each vLLM cell of a cold run to the warm run's load of it,
as the comparison page and ``diff --json`` (``cells``) do: the same cells, lines and
output code files, whichever side is the cold one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import DATA

CAPTURED = DATA / "captured"
REUSE = CAPTURED / "vllm_reuse" / "dedicated_log_torch_trace_rank_0_0jxlnkb9.log"
REUSE_WARM = CAPTURED / "vllm_reuse" / "warm" / "dedicated_log_torch_trace_rank_0_qqjyvds1.log"
NO_AOT = CAPTURED / "vllm_no_aot" / "dedicated_log_torch_trace_rank_0_nvg7hra4.log"
NO_AOT_WARM = CAPTURED / "vllm_no_aot" / "warm" / "dedicated_log_torch_trace_rank_0_l3yu64ly.log"


def _diff(a: Path, b: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", "diff", str(a), str(b), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def _cells(a: Path, b: Path) -> tuple[str, list[dict[str, Any]]]:
    data = json.loads(_diff(a, b, "--json"))
    [vllm] = [r["vllm"] for r in data["ranks"] if r.get("vllm")]
    return vllm["cold_run"], vllm["cells"]


@pytest.mark.parametrize(
    ("a", "b"),
    [(REUSE, REUSE_WARM), (REUSE_WARM, REUSE), (NO_AOT, NO_AOT_WARM)],
    ids=["reuse", "reuse-warm-first", "no-aot"],
)
def test_the_text_maps_each_cold_cell_to_its_warm_load(a: Path, b: Path) -> None:
    cold_run, cells = _cells(a, b)
    warm_run = "new" if cold_run == "baseline" else "baseline"
    text = _diff(a, b).splitlines()
    found = sum(c["warm_line"] is not None for c in cells)
    head = f"vllm cells ({cold_run} cold -> {warm_run} warm): {found} of {len(cells)} cells"
    assert any(line.startswith(head) for line in text), "\n".join(text)
    said = [line.strip() for line in text if line.strip().startswith("vllm cell ")]
    assert len(said) == len(cells) > 0
    several = len({c["call"] for c in cells}) > 1
    for line, cell in zip(said, cells, strict=True):
        where = f"{cell['call']}: " if several else ""
        assert line.startswith(f"vllm cell {where}{cell['subgraph']} {cell['range']}: "), line
        assert f"{cold_run} line {cell['cold_line']}" in line
        if cell["reused"] and cell["via_line"] is not None:
            assert f"reused, probably the piece at line {cell['via_line']}" in line
        assert f"-> {warm_run} load line {cell['warm_line']} (" in line
        assert line.endswith(f" {cell['output_code']})")
