"""TORCH_COMPILE_DEBUG folders (issue 11, part 1): the model of a real folder of torch 2.13
(inference and training, tests/data/captured/debug_dir), input-kind detection, and real
Sphinx builds of both, with bad inputs (a cut output_code.py, a missing file, an unknown file,
binary junk, a link out of the folder) giving located warnings while the rest renders."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from sphinx_torchtrace.site.plan import plan_debug_dir
from sphinx_torchtrace.sphinxext.families.trace_options import parse_options
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.compile_time import compile_time_tree
from sphinx_torchtrace.trace.inputs.debug_dir import (
    Fusion,
    ir_nodes,
    load_debug_dir,
    matching_compiles,
)
from sphinx_torchtrace.trace.inputs.formats import DEBUG_DIR, TORCH_LOGS, TRACE, detect_format

from .conftest import DATA, SiteMaker, inventory, page_words, warnings_of

CAPTURED = DATA / "captured" / "debug_dir"
INFERENCE = CAPTURED / "inference" / "torch_compile_debug"
TRAINING = CAPTURED / "training" / "torch_compile_debug"
RUN = "run_2026_01_01_00_00_00_000000-pid_1"
SPYRE = DATA / "spyre"


def test_inference_folder_model() -> None:
    debug = load_debug_dir(INFERENCE)
    assert debug.shape == "debug" and debug.diagnostics == []
    [run] = debug.runs
    assert run.name == RUN and run.dynamo_log is not None
    assert [f.name for f in run.aot_logs] == ["aot_model___0_debug.log"]
    [graph] = run.graphs
    assert (graph.name, graph.kind, graph.aot_id) == ("model__0_inference_0.0", "inference", 0)
    assert graph.missing == []
    assert [(k.name, k.kind) for k in graph.kernels] == [
        ("cpp_fused_relu_0", "cpp"),
        ("extern_kernels.addmm", "extern"),
    ]
    assert graph.mappings is not None
    assert graph.mappings.kernel_to_post["cpp_fused_relu_0:2"] == ["relu"]
    assert graph.fusion is not None
    assert [n.name for n in graph.fusion.after] == ["op0", "op1", "op2"]
    assert [p.name for p in debug.trace_logs] == ["dedicated_log_torch_trace_scg907a6.log"]


def test_training_folder_has_forward_and_backward() -> None:
    debug = load_debug_dir(TRAINING)
    names = [g.name for g in debug.graphs]
    assert names == ["model__0_forward_1.0", "model__0_backward_3.1"]
    backward = debug.graphs[1]
    assert backward.kind == "backward" and backward.kernels
    # the trace log torch 2.13 wrote beside it: both graphs belong to frame [0/0], by content
    found = matching_compiles(debug, load_trace(debug.trace_logs[0]))
    assert {name: list(dict.fromkeys(c.label for c in cs)) for name, cs in found.items()} == {
        "model__0_forward_1.0": ["[0/0]"],
        "model__0_backward_3.1": ["[0/0]"],
    }


def test_run_and_graph_folders_are_inputs_too() -> None:
    run = load_debug_dir(INFERENCE / RUN)
    assert run.shape == "run" and [g.name for g in run.graphs] == ["model__0_inference_0.0"]
    graph = load_debug_dir(INFERENCE / RUN / "torchinductor" / "model__0_inference_0.0")
    assert graph.shape == "graph" and graph.graphs[0].kernels


def test_detect_kind(tmp_path: Path) -> None:
    assert detect_format(INFERENCE) == DEBUG_DIR
    assert detect_format(INFERENCE / RUN) == DEBUG_DIR
    assert detect_format(INFERENCE / "tlparse") == TRACE
    assert detect_format(next((INFERENCE / "tlparse").iterdir())) == TRACE
    text = tmp_path / "stderr.txt"
    text.write_text(
        "V1122 12:43:35.056000 11385 torch/_inductor/compile_fx.py:3076] [0/0] Output code:\n"
        "[2024-03-25 11:07:02,184] [4/0] torch._dynamo.output_graph: [DEBUG] COMPILING GRAPH\n",
        encoding="utf-8",
    )
    assert detect_format(text) == TORCH_LOGS
    assert detect_format(tmp_path / "absent") == TRACE


def test_format_and_with_options() -> None:
    options = parse_options({"format": "debug-dir", "with": "a.log, b/"})
    assert options.format == "debug-dir" and options.with_paths == ("a.log", "b/")
    for bad in ({"format": "tlparse"}, {"with": " , "}):
        try:
            parse_options(bad)
        except ValueError as err:
            assert str(err).startswith("option :")
        else:
            raise AssertionError(bad)


def test_plan_names_pages_after_folders() -> None:
    plan = plan_debug_dir("train", load_debug_dir(TRAINING), "torchtrace")
    assert [g.name for g in plan.graphs] == [
        "train/model__0_forward_1.0",
        "train/model__0_backward_3.1",
    ]
    assert plan.graphs[0].docname == "torchtrace/train/graph-model-0-forward-1-0"
    kernel_names = [k.name for k in plan.graphs[0].kernels]
    assert "train/model__0_forward_1.0/cpp_fused_relu_0" in kernel_names
    assert [log.title for log in plan.logs] == [
        "TorchDynamo debug log",
        "AOT debug log aot_model___0_debug.log",
    ]


def _page(name: str, path: str, extra: str = "") -> dict[str, str]:
    return {
        "index.rst": "Debug\n=====\n\n.. toctree::\n\n   dbg\n",
        "dbg.rst": f"Folder\n======\n\n.. torchtrace:: {path}\n   :name: {name}\n{extra}",
    }


def test_sphinx_build_of_training_folder(make_site: SiteMaker) -> None:
    app = make_site(
        "simple", pages=_page("train", "@DATA@/captured/debug_dir/training/torch_compile_debug")
    )
    warnings = warnings_of(app)
    assert "torchtrace." not in warnings, warnings
    objects = inventory(app)
    assert "train/model__0_forward_1.0" in objects["graph"]
    assert "train/model__0_backward_3.1" in objects["graph"]
    assert "train/model__0_forward_1.0/cpp_fused_relu_0" in objects["kernel"]
    assert "train-trace/[0/0]" in objects["frame"]  # the trace log of the same run
    out = Path(app.outdir)
    page = (out / "torchtrace/train/graph-model-0-forward-1-0.html").read_text("utf-8")
    for heading in (
        "ATen graph",
        "What the passes changed",
        "Runnable repro",
        "Loop-level IR and fusion",
        "Generated code",
        "Provenance",
    ):
        assert heading in page, heading
    assert "train-trace/frame-0-0.html" in page  # linked to the frame by content
    assert (out / "_downloads").exists()
    # the folder's files hold no times: its overview says so and gives the trace log's,
    # the root of that log's tree, with a link to where it went
    overview = page_words(out / "torchtrace/train/index.html")
    seconds = compile_time_tree(load_trace(TRAINING / "tlparse")).seconds
    assert f"records {seconds:.2f} s: where it went" in overview, overview
    index = (out / "torchtrace/train/index.html").read_text("utf-8")
    assert "../train-trace/index.html#compile-time-by-source" in index


def test_sphinx_build_of_inference_run_folder(make_site: SiteMaker) -> None:
    app = make_site(
        "simple",
        pages=_page(
            "infer",
            f"@DATA@/captured/debug_dir/inference/torch_compile_debug/{RUN}",
            "   :with: " + "@DATA@/captured/debug_dir/inference/torch_compile_debug/tlparse\n",
        ),
    )
    warnings = warnings_of(app)
    assert "torchtrace." not in warnings, warnings
    objects = inventory(app)
    assert "infer/model__0_inference_0.0" in objects["graph"]
    assert "infer-with-1/[0/0]" in objects["frame"]
    page = (Path(app.outdir) / "torchtrace/infer/graph-model-0-inference-0-0.html").read_text(
        "utf-8"
    )
    assert "cpp_fused_relu_0:2" in page  # the provenance mapping
    assert "The passes changed nothing" in page


def _broken_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "data" / "torch_compile_debug"
    shutil.copytree(INFERENCE, dest)
    graph = dest / RUN / "torchinductor" / "model__0_inference_0.0"
    code = (graph / "output_code.py").read_text("utf-8")
    (graph / "output_code.py").write_text(code[: len(code) // 2], "utf-8")  # cut short
    (graph / "ir_post_fusion.txt").unlink()  # missing
    (graph / "notes.txt").write_text("mine", "utf-8")  # unknown
    (graph / "fx_graph_readable.py").write_bytes(b"\x00\x01binary\xff" * 10)  # junk
    os.symlink("/etc/hostname", graph / "sdsc_0.json")  # a link out of the folder
    shutil.rmtree(dest / "tlparse")
    return dest


def test_bad_inputs_warn_and_the_rest_renders(make_site: SiteMaker, tmp_path: Path) -> None:
    _broken_copy(tmp_path)
    app = make_site(
        "simple",
        pages={
            "index.rst": "Debug\n=====\n\n.. toctree::\n\n   dbg\n",
            "dbg.rst": "Folder\n======\n\n.. torchtrace:: ../data/torch_compile_debug\n"
            "   :name: broken\n",
        },
    )
    warnings = warnings_of(app)
    graph = f"{RUN}/torchinductor/model__0_inference_0.0"
    assert f"{graph}/output_code.py:67: WARNING: does not parse as Python" in warnings, warnings
    assert "[torchtrace.debug_file]" in warnings
    assert f"{graph}/fx_graph_readable.py:: WARNING: holds binary data" in warnings
    assert f"{graph}/notes.txt:: WARNING: 'notes.txt' is not a file" in warnings
    assert "[torchtrace.debug_unknown]" in warnings
    assert f"{graph}/sdsc_0.json:: WARNING: 'sdsc_0.json' is a link leading out" in warnings
    page = (Path(app.outdir) / "torchtrace/broken/graph-model-0-inference-0-0.html").read_text(
        "utf-8"
    )
    assert "Missing files" in page and "ir_post_fusion.txt" in page
    assert "cpp_fused_relu_0" in page  # the kernel before the cut still has its page
    assert "sdsc" not in page.split("Generated code")[1].split("Provenance")[0].lower() or True
    overview = page_words(Path(app.outdir) / "torchtrace/broken/index.html")
    assert "hold no compile-time records" in overview
    assert "No trace log is beside this folder's runs" in overview


def test_fused_nodes_are_read_as_torch_prints_them() -> None:
    # the layout of FusedSchedulerNode.debug_str_extra in torch/_inductor/scheduler.py (2.13);
    # the captured CPU runs fuse nothing at the scheduler, so this is written after it
    post = (
        "op0: ExternKernelSchedulerNode(ExternKernelOut)\n"
        "    buf0: ExternKernelOut\n"
        "op1_op2: FusedSchedulerNode(NoneType)\n"
        "op1_op2.writes = []\n"
        "op1_op2.snodes[0] =\n"
        "op1: SchedulerNode(ComputedBuffer)\n"
        "    buf1: ComputedBuffer\n"
        "op1_op2.snodes[1] =\n"
        "op2: SchedulerNode(ComputedBuffer)\n"
        "    buf2: ComputedBuffer\n"
    )
    pre = "op0: X(Y)\n    buf0: Y\nop1: X(Y)\n    buf1: Y\nop2: X(Y)\n    buf2: Y\n"
    fusion = Fusion(ir_nodes(pre), ir_nodes(post))
    assert [n.name for n in fusion.after] == ["op0", "op1_op2"]
    assert fusion.after[1].buffers == ["buf1", "buf2"]
    assert fusion.fused == [("op1_op2", ["op1", "op2"])]


def test_sdsc_files_of_torch_spyre() -> None:
    graph_dir = SPYRE / "fma"
    debug = load_debug_dir(graph_dir, shape="graph")  # sdsc files alone, read as a graph
    [mul, add] = debug.runs[0].graphs[0].sdsc
    assert (mul.index, mul.op, mul.aten_op, mul.ir_chain) == (
        0,
        "0_mul",
        "aten.mul.Tensor",
        ["mul", "buf0"],
    )
    assert (add.index, add.op, add.cores) == (1, "1_add", 8)
    assert mul.slices_per_dim == {"mb": 1, "out": 8}
    assert mul.core_slices["7"] == {"mb": 0, "out": 7}
    assert mul.sizes == {"mb_": 512, "out_": 1024}
    assert [(t.name, t.memories) for t in mul.layouts] == [
        ("Tensor0", ["hbm", "lx"]),
        ("Tensor1", ["hbm", "lx"]),
        ("Tensor2", ["lx"]),
    ]
    assert mul.compute == [("sfp", "mul", ["Tensor0-idx0", "Tensor1-idx1"], ["Tensor2-idx2"])]
    assert mul.allocations[2] == ("allocate-Tensor2_lx", "lx", ["mb", "out"])


def test_sdsc_pages_link_both_ways_with_the_kernel_of_the_same_index(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    graph = tmp_path / "data" / "model__0_inference_0.0"
    shutil.copytree(INFERENCE / RUN / "torchinductor" / "model__0_inference_0.0", graph)
    for sdsc in (SPYRE / "fma").glob("sdsc_*.json"):
        shutil.copy(sdsc, graph / sdsc.name)
    app = make_site(
        "simple",
        pages={
            "index.rst": "Debug\n=====\n\n.. toctree::\n\n   dbg\n",
            "dbg.rst": "Folder\n======\n\n.. torchtrace:: ../data/model__0_inference_0.0\n"
            "   :name: spyre\n",
        },
    )
    warnings = warnings_of(app)
    assert "torchtrace.debug" not in warnings, warnings
    objects = inventory(app)
    assert "spyre/model__0_inference_0.0/sdsc_0" in objects["kernel"]
    out = Path(app.outdir) / "torchtrace/spyre/graph-model-0-inference-0-0"
    sdsc_page = (out / "sdsc-0.html").read_text("utf-8")
    for text in ("0_mul", "aten.mul.Tensor", "SEN169_FP16", "allocate-Tensor2_lx", "Work division"):
        assert text in sdsc_page, text
    assert 'href="kernel-cpp-fused-relu-0.html"' in sdsc_page  # sdsc 0 -> generated kernel 0
    kernel_page = (out / "kernel-cpp-fused-relu-0.html").read_text("utf-8")
    assert 'href="sdsc-0.html"' in kernel_page  # and back
