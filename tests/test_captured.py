"""Logs the shared folder lacks, made with torch 2.13 by tests/capture/ and committed sanitized."""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.provenance import provenance_view

CAPTURED = Path(__file__).parent / "data" / "captured"
DRAFT = CAPTURED / "draft_export"
FIRST = DRAFT / "dedicated_log_torch_trace_6wp6mdhq.log"  # torch.export.export
SECOND = DRAFT / "dedicated_log_torch_trace_j5am_2yg.log"  # draft_export's own handler


def test_compiled_autograd_ids() -> None:
    rank = load_trace(CAPTURED / "compiled_autograd").ranks[0]
    labels = [c.label for c in rank.compiles]
    assert {"[!0/-/-]", "[!0/1/0]", "[!1/-/-]", "[!1/3/0]"} <= set(labels)
    graphs = rank.compile("[!0/-/-]").artifacts_named("compiled_autograd_graph")
    assert len(graphs) == 1 and graphs[0].node_count and graphs[0].node_count > 10
    assert rank.compile("[!0/1/0]").status == "ok"
    assert list(rank.dump_files) == ["<eval_with_key>.7", "<eval_with_key>.19"]
    assert "def forward(self, inputs, sizes" in rank.dump_files["<eval_with_key>.7"].text()


def test_draft_export_second_log_borrows_strings_of_the_first() -> None:
    trace = load_trace(SECOND)
    rank = trace.ranks[0]
    assert trace.diagnostics == []
    report = rank.export
    assert len(report.exported_programs) == 1
    assert len(report.missing_fake_kernels) == 1
    assert len(report.data_dependent_errors) == 1
    assert len(report.unbacked_symbols) == 2
    files = {f.filename for c in rank.compiles for e in c.shape_events for f in e.user_stack}
    assert "/home/user/project/draft_export.py" in files


def test_draft_export_second_log_alone_reports_unknown_strings(tmp_path: Path) -> None:
    shutil.copy(SECOND, tmp_path / SECOND.name)
    trace = load_trace(tmp_path / SECOND.name)
    kinds = {d.subtype for d in trace.diagnostics}
    assert kinds == {"intern"}
    frames = [f for c in trace.ranks[0].compiles for e in c.shape_events for f in e.user_stack]
    assert any(f.filename.startswith("<unknown string") for f in frames)


def test_draft_export_pair_as_a_list_of_logs() -> None:
    trace = load_trace([FIRST, SECOND])
    assert [len(r.export.exported_programs) for r in trace.ranks] == [1, 1]
    assert trace.diagnostics == []


def test_two_gloo_ranks() -> None:
    trace = load_trace(CAPTURED / "multi_rank_gloo")
    assert [r.rank for r in trace.ranks] == [0, 1]
    for rank in trace.ranks:
        frames = {str(c.id) for c in rank.compiles}
        assert {"[0/0]", "[0/0_1]", "[4/0]"} <= frames
        split = [a.name for c in rank.compiles for a in c.artifacts if "ddp_split" in a.name]
        assert split == [
            "optimize_ddp_split_graph",
            "optimize_ddp_split_child_submod_0",
            "optimize_ddp_split_child_submod_1",
            "optimize_ddp_split_child_submod_2",
        ]
        backward = [m for c in rank.compiles for m in c.metrics if m.event.startswith("bwd_")]
        assert len(backward) == 3


def test_aot_inductor() -> None:
    rank = load_trace(CAPTURED / "aoti").ranks[0]
    (only,) = rank.compiles
    assert only.label == "[-/-]"
    wrapper = only.artifacts_named("inductor_aot_wrapper_code")[0]
    assert "AOTInductorModel::run_impl" in wrapper.text()
    assert any(k.kind == "cpp" and k.launch_lines for k in wrapper.kernels)
    view = provenance_view(only)
    assert view is not None and view.language == "cpp"
    assert view.line_maps["cppCodeToPost"]
