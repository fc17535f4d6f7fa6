"""Bounded work for every input kind: tables capped both ways, parsers linear in ids.

An 11 KB ``sdsc_0.json`` naming a thousand dimensions for 256 cores once became a
256 x 1,000 table (61 s, 744 MB); a text log of 8,000 ``[i/0_1]`` ids took 126 s to
parse, as each new id scanned every earlier one.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

from sphinx_torchtrace.site.blocks import TABLE_COLUMNS, TABLE_ROWS, Paragraph, Section, Table
from sphinx_torchtrace.site.pages.debug_dir import build_debug_page
from sphinx_torchtrace.site.plan import PageSettings, plan_debug_dir
from sphinx_torchtrace.trace.inputs.debug_dir import load_debug_dir
from sphinx_torchtrace.trace.inputs.text_log import parse_text_log

from .conftest import DATA
from .tools.many_ids_log import write_many_ids_text_log

SPYRE = DATA / "spyre" / "fma"


def _tables(blocks: object) -> list[Table]:
    found: list[Table] = []
    if isinstance(blocks, Table):
        return [blocks]
    if isinstance(blocks, Section):
        return _tables(list(blocks.blocks))
    if isinstance(blocks, list | tuple):
        for b in blocks:
            found.extend(_tables(b))
    return found


def _notes(blocks: object) -> str:
    text = []
    for b in blocks if isinstance(blocks, list) else [blocks]:
        if isinstance(b, Section):
            text.append(_notes(list(b.blocks)))
        elif isinstance(b, Paragraph):
            text.append("".join(p for p in b.content if isinstance(p, str)))
    return "\n".join(text)


def test_sdsc_tables_are_capped_in_rows_and_columns(tmp_path: Path) -> None:
    spec = json.loads((SPYRE / "sdsc_0.json").read_text(encoding="utf-8"))
    ((op, root),) = spec.items()
    dims = {f"d{i}": 1 for i in range(1000)}
    root["numWkSlicesPerDim_"] = dims
    root["coreIdToWkSlice_"] = {str(c): dict.fromkeys(dims, 0) for c in range(256)}
    body = next(iter(root["dscs_"][0].values()))
    template = body["labeledDs_"][0]
    body["labeledDs_"] = [copy.deepcopy(template) for _ in range(3000)]
    body["computeOp_"] = [{} for _ in range(3000)]
    graph = tmp_path / "fma"
    graph.mkdir()
    (graph / "sdsc_0.json").write_text(json.dumps({op: root}), encoding="utf-8")
    shutil.copy(SPYRE / "sdsc_1.json", graph / "sdsc_1.json")

    debug = load_debug_dir(graph, shape="graph")  # was a minute and 744 MB for one page
    plan = plan_debug_dir("spyre", debug, "torchtrace")
    pages = [build_debug_page(plan, d, PageSettings()) for d in plan.docnames]
    page = next(p for p in pages if p.docname.endswith("sdsc-0"))
    tables = _tables(page.blocks)
    assert tables
    for table in tables:
        assert len(table.header) <= TABLE_COLUMNS and len(table.rows) <= TABLE_ROWS
        assert all(len(row) <= TABLE_COLUMNS for row in table.rows)
    notes = _notes(page.blocks)
    assert "more columns" in notes and "more rows" in notes  # what was left out is said
    assert "2500 more rows" in notes  # 3,000 tensors: 500 shown
    assert "985 more columns" in notes  # 1,001 columns (core and 1,000 dims): 16 shown


def test_text_log_of_many_attempt_ids(tmp_path: Path) -> None:
    """8,000 frames, each restarted: parsed in seconds (was 126 s; the time against the
    number of ids is ``benchmarks/bench_many_ids.py``'s), every restart marked."""
    n = 8000
    data = write_many_ids_text_log(tmp_path / "ids.log", n).read_bytes()
    trace = parse_text_log(data, "ids.log")
    compiles = trace.ranks[0].compiles
    assert {c.label for c in compiles} >= {f"[{i}/0]" for i in range(n)}
    assert {c.label for c in compiles} >= {f"[{i}/0_1]" for i in range(n)}
    assert sorted(c.label for c in compiles if c.restarted) == sorted(f"[{i}/0]" for i in range(n))
