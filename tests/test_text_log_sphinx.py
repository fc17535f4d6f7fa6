"""TORCH_LOGS text logs in real Sphinx builds (issue 11, part 2): detected without options,
each captured option set and both line formats, ranks from torchrun's prefixes, a text log
beside the trace of the same run (either way round), and ``:with:`` problems as located
warnings while the rest renders."""

from __future__ import annotations

from pathlib import Path

from .conftest import DATA, SiteMaker, inventory, warnings_of

LOGS = "@DATA@/captured/torch_logs"
WITH_TRACE = DATA / "captured" / "torch_logs" / "with_trace"
TRACE_LOG = next(WITH_TRACE.glob("dedicated_log_torch_trace_*.log")).name


def _site(make_site: SiteMaker, body: str, builder: str = "html") -> object:
    return make_site(
        "simple",
        builder,
        pages={
            "index.rst": "Logs\n====\n\n.. toctree::\n\n   logs\n",
            "logs.rst": "Text logs\n=========\n\n" + body,
        },
        confoverrides={"torchtrace_fold_bytes": 0},
    )  # kernels on pages of their own


def _html(app: object, path: str) -> str:
    return (Path(app.outdir) / path).read_text("utf-8")  # type: ignore[attr-defined]


def test_each_text_log_is_detected_and_gives_frames(make_site: SiteMaker) -> None:
    app = _site(
        make_site,
        "".join(
            f".. torchtrace:: {LOGS}/{name}.log\n   :name: {name.replace('_', '-')}\n\n"
            for name in ("options", "plus_dynamo", "plus_inductor", "seed003_old_format", "ranks")
        ),
    )
    assert "torchtrace." not in warnings_of(app), warnings_of(app)
    objects = inventory(app)
    frames = set(objects["frame"])
    every = ["[-/-]", "[0/0]", "[0/0_1]", "[1/0]", "[2/0]", "[2/1]", "[2/2]"]
    assert {f"options/{c}" for c in [*every, "[3/0]"]} <= frames
    assert {f"plus-dynamo/{c}" for c in [*every, "[3/0]"]} <= frames
    assert {f"plus-inductor/{c}" for c in every} <= frames  # no Dynamo line names [3/0]
    assert {"seed003-old-format/[4/0]", "ranks/rank0/[0/0]", "ranks/rank1/[0/1]"} <= frames
    assert "ranks/rank0/[0/1]" not in frames  # only rank 1 recompiled
    graphs = set(objects["graph"])
    assert "plus-dynamo/[2/1]/dynamo_output_graph" in graphs  # +dynamo: traced graphs
    assert "plus-inductor/[1/0]/inductor_post_grad_graph" in graphs  # +inductor
    assert "options/[2/2]/dynamo_cpp_guards_str" in graphs  # guards
    assert set(objects["kernel"]) >= {  # output_code: C++ kernels, old format: Triton
        "options/[0/0_1]/cpp_fused_add_sin_0",
        "seed003-old-format/[4/0]/triton_poi_fused_mul_0",
    }
    # a kernel recompiled for new sizes has no page: its object is on its frame's page
    kernels = objects["kernel"]
    assert kernels["options/[2/1]/cpp_fused_add_mul_sum_tanh_0"].startswith(
        "torchtrace/options/frame-2-1.html#"
    )
    assert "/kernel-" in kernels["options/[2/0]/cpp_fused_add_mul_sum_tanh_0"]
    failed = _html(app, "torchtrace/options/frame-3-0.html")
    assert "torchtrace-status-error" in failed and "BackendCompilerFailed" in failed
    assert "a text log carries no metrics" in failed
    restarted = _html(app, "torchtrace/options/index.html")
    assert "options/[0/0] (break)" in restarted
    rank_page = _html(app, "torchtrace/ranks/rank1/frame-0-1.html")
    assert "size mismatch" in rank_page or "guard" in rank_page  # the failed guard


def test_format_option_forces_the_kind(make_site: SiteMaker, tmp_path: Path) -> None:
    """``:format: torch-logs`` reads a file as a text log; binary junk read so is one
    located ``torchtrace.text_log`` warning, its lines kept as text, and the rest renders."""
    (tmp_path / "junk.bin").write_bytes(b"\xff\xfe\x00binary\x00junk\n" * 50)
    app = _site(
        make_site,
        f".. torchtrace:: {LOGS}/options.log\n   :name: forced\n"
        "   :format: torch-logs\n\n"
        ".. torchtrace:: ../junk.bin\n   :name: junk\n"
        "   :format: torch-logs\n",
    )
    lines = [line for line in warnings_of(app).splitlines() if "WARNING" in line]
    # each problem once, located in the file: not UTF-8, and no line with a log prefix
    assert len(lines) == 2 and all("../junk.bin:" in line for line in lines), lines
    assert "[torchtrace.encoding]" in lines[0] and "[torchtrace.text_log]" in lines[1]
    frames = inventory(app)["frame"]
    assert "forced/[3/0]" in frames and "junk/[-/-]" in frames
    assert "binary" in _html(app, "torchtrace/junk/frame-none.html")


def test_text_log_beside_its_trace_either_way_round(make_site: SiteMaker) -> None:
    app = _site(
        make_site,
        (
            f".. torchtrace:: {LOGS}/with_trace/{TRACE_LOG}\n   :name: trace-first\n"
            f"   :with: {LOGS}/with_trace/torch_logs.log\n\n"
            f".. torchtrace:: {LOGS}/with_trace/torch_logs.log\n   :name: text-first\n"
            f"   :with: {LOGS}/with_trace/{TRACE_LOG}\n\n"
        ),
    )
    assert "torchtrace." not in warnings_of(app), warnings_of(app)
    objects = inventory(app)
    first = {k.split("/", 1)[1] for k in objects["frame"] if k.startswith("trace-first/")}
    second = {k.split("/", 1)[1] for k in objects["frame"] if k.startswith("text-first/")}
    assert first == second and "[1/0]" in first
    # the trace decides the graphs: the joint graph a text log never holds is there
    assert "text-first/[1/0]/aot_inference_graph" in objects["graph"]
    for label in ("trace-first", "text-first"):
        frame = _html(app, f"torchtrace/{label}/frame-1-0.html")
        assert "text_log_lines" in frame and "Output code written to:" in frame
        assert "a text log carries no metrics" not in frame  # the trace's metrics are there


def test_with_problems_are_located_warnings(make_site: SiteMaker, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "another_run.log").write_text(
        "V1122 12:43:35.056000 11 torch/_dynamo/guards.py:5396] [7/3] [__recompiles] "
        "Recompiling function f in x.py:3\n",
        "utf-8",
    )
    app = _site(
        make_site,
        (
            f".. torchtrace:: {LOGS}/with_trace/{TRACE_LOG}\n   :name: paired\n"
            "   :with: nothere.log, ../other/another_run.log\n"
        ),
    )
    warnings = warnings_of(app)
    assert "logs.rst:4: WARNING: :with: nothere.log: no such file or folder" in warnings
    assert "[torchtrace.read]" in warnings
    # a text log of another run names a compile the trace has not
    assert "1 compile(s) the trace has not ([7/3])" in warnings
    assert "[torchtrace.unmatched]" in warnings
    assert "paired/[1/0]" in inventory(app)["frame"]  # the rest renders


def test_text_log_site_in_the_text_builder(make_site: SiteMaker) -> None:
    app = _site(
        make_site, f".. torchtrace:: {LOGS}/seed003_old_format.log\n   :name: old\n", "text"
    )
    assert "torchtrace." not in warnings_of(app)
    out = Path(app.outdir)
    frame = next(out.rglob("frame-4-0.txt")).read_text("utf-8")
    assert "triton_poi_fused_mul_0" in frame
    assert "/tmp/ipykernel_" not in frame  # a notebook's cell files are rewritten
    assert "<notebook>/" in frame
