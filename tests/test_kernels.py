"""Kernels split out of Inductor's generated code, on the bundled real logs.

What a reader of a report relies on: every kernel is listed under the right
kind, its definition and launch lines point where they say, the graph nodes
it came from are attached, library (extern) calls are listed too, and a
truncated or foreign payload never breaks the build of a report.
"""

from __future__ import annotations

import functools
import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.kernels import KERNEL_KINDS, Kernel, split_output_code

SHARED = Path(__file__).parent / "data" / "shared"
INPUTS = SHARED / "tlparse-inputs" / "inputs"
CODE_NAMES = ("inductor_output_code", "inductor_aot_wrapper_code", "inductor_aot_kernel_code")

# Logs with Triton (GPU) output code, JIT and AOTInductor.
GPU_LOGS = [
    INPUTS / "inductor_provenance_jit_cuda_log.txt",
    INPUTS / "inductor_provenance_jit_debug_handle_log.txt",
    INPUTS / "inductor_provenance_aot_cuda_log.txt",
    INPUTS / "inductor_provenance_aot_debug_handle_log.txt",
    INPUTS / "inductor_provenance_extended_log.txt",
    INPUTS / "cache_hit_miss.log",
    INPUTS / "autotune_with_compile_id.log",
    INPUTS / "simple.log",
    INPUTS / "collectives_parity" / "dedicated_log_torch_trace_rank_0.log",
    *sorted((INPUTS / "multi_rank_runtime").glob("*.log")),
    *sorted((SHARED / "tlparse-inputs" / "graph_exec_order_tests").glob("*.log")),
]
CPU_LOGS = [
    SHARED / "simple" / "dedicated_log_torch_trace_5aek85xk.log",
    SHARED / "training" / "dedicated_log_torch_trace_ukjvghtw.log",
    SHARED / "provenance" / "dedicated_log_torch_trace_0ptegd0d.log",
    SHARED / "recompiles" / "dedicated_log_torch_trace_afr5b1tf.log",
    INPUTS / "inductor_provenance_jit_log.txt",
    INPUTS / "inductor_provenance_aot_log.txt",
    INPUTS / "inductor_provenance_aot_log_old.txt",
    *sorted((INPUTS / "multi_rank_schedule").glob("*.log")),
]
ALL_LOGS = GPU_LOGS + CPU_LOGS


class Code:
    """One output-code artifact: its name, compile label, text and kernels."""

    def __init__(self, label: str, name: str, text: str, kernels: list[Kernel]) -> None:
        self.label = label
        self.name = name
        self.text = text
        self.lines = text.split("\n")
        self.kernels = kernels

    def kernel(self, name: str) -> Kernel:
        return next(k for k in self.kernels if k.name == name)


@functools.cache
def codes(log: Path) -> list[Code]:
    """The output-code artifacts of a log, with the kernels the builder stored."""
    rank = load_trace(str(log)).ranks[0]
    return [
        Code(c.label, a.name, a.text(), a.kernels)
        for c in rank.compiles
        for a in c.artifacts
        if a.event == "inductor_output_code" or a.name in CODE_NAMES
    ]


def code(log: Path, name: str = "inductor_output_code", label: str | None = None) -> Code:
    return next(c for c in codes(log) if c.name == name and label in (None, c.label))


def summary(log: Path) -> dict[str, list[str]]:
    return {
        f"{c.label} {c.name}": sorted(f"{k.kind}:{k.name}" for k in c.kernels) for c in codes(log)
    }


def ids(logs: list[Path]) -> list[str]:
    return [str(p.relative_to(SHARED)) for p in logs]


# --- what is found, pinned --------------------------------------------------

PINNED: dict[Path, dict[str, list[str]]] = {
    SHARED / "simple" / "dedicated_log_torch_trace_5aek85xk.log": {
        "[0/0] inductor_output_code": [
            "cpp:cpp_fused__softmax_2",
            "cpp:cpp_fused_gelu_1",
            "cpp:cpp_fused_relu_0",
            "extern:extern_kernels.addmm",
        ],
    },
    SHARED / "training" / "dedicated_log_torch_trace_ukjvghtw.log": {
        "[0/0] inductor_output_code": [
            "cpp:cpp_fused__native_batch_norm_legit_functional_convolution_backward_max_pool2d"
            "_with_indices_backward_native_batch_norm_backward_relu_threshold_backward_3",
            "cpp:cpp_fused_gelu_gelu_backward_sum_1",
            "cpp:cpp_fused_max_pool2d_with_indices_max_pool2d_with_indices_backward_view_2",
            "cpp:cpp_fused_sum_0",
            "extern:aten.scatter_reduce_.two",
            "extern:extern_kernels.mm",
            "extern:torch.ops.aten.convolution_backward.default",
        ],
        "[3/0] inductor_output_code": [
            "cpp:cpp_fused_add_addcdiv_copy__div_fma_lerp_mul_neg_pow_reciprocal_rsub_sqrt_0"
        ],
    },
    INPUTS / "inductor_provenance_jit_cuda_log.txt": {
        "[0/0] inductor_output_code": [
            "extern:extern_kernels.mm",
            "triton_pointwise:triton_poi_fused_addmm_gelu_2",
            "triton_pointwise:triton_poi_fused_addmm_relu_sigmoid_0",
            "triton_pointwise:triton_poi_fused_mul_1",
        ],
    },
    INPUTS / "inductor_provenance_aot_cuda_log.txt": {
        "[-/-] inductor_aot_wrapper_code": [
            "extern:aoti_torch_cuda_mm_out",
            "triton_pointwise:triton_poi_fused_addmm_gelu_2",
            "triton_pointwise:triton_poi_fused_addmm_relu_sigmoid_0",
            "triton_pointwise:triton_poi_fused_mul_1",
        ],
        # Triton kernels of an AOTI build live in the wrapper; the kernel file says so only.
        "[-/-] inductor_aot_kernel_code": [],
    },
    INPUTS / "inductor_provenance_aot_log.txt": {
        "[-/-] inductor_aot_wrapper_code": [
            "cpp:cpp_fused_gelu_1",
            "cpp:cpp_fused_mul_relu_sigmoid_0",
            "extern:aoti_torch_cpu_addmm_out",
        ],
        "[-/-] inductor_aot_kernel_code": [
            "cpp:cpp_fused_gelu_1",
            "cpp:cpp_fused_mul_relu_sigmoid_0",
        ],
    },
    INPUTS / "cache_hit_miss.log": {
        "[1/0] inductor_output_code": ["triton_template:triton_tem_fused_0"],
        "[1/0] #2 inductor_output_code": ["triton_template:triton_tem_fused_0"],
        "[1/0] #3 inductor_output_code": ["triton_template:triton_tem_fused_0"],
    },
    INPUTS / "collectives_parity" / "dedicated_log_torch_trace_rank_0.log": {
        "[0/0] inductor_output_code": [
            "extern:extern_kernels.mm",
            "extern:torch.ops._c10d_functional.all_reduce_.default",
            "triton_pointwise:triton_poi_fused_all_reduce_silu_0",
            "triton_pointwise:triton_poi_fused_relu_1",
        ],
        **{
            f"[0/{i}] inductor_output_code": sorted(
                [
                    "extern:extern_kernels.mm",
                    "extern:torch.ops._c10d_functional.all_gather_into_tensor.default",
                    "extern:torch.ops._c10d_functional.all_reduce_.default",
                    "extern:torch.ops._c10d_functional.reduce_scatter_tensor.default",
                    "triton_persistent_reduction:triton_per_fused_all_reduce_gelu_native_layer_norm_0",
                    "triton_pointwise:triton_poi_fused_add_mul_repeat_2",
                    "triton_pointwise:triton_poi_fused_all_gather_into_tensor_relu_1",
                ]
                # [0/1] logs no wait_tensor call: its comment stands alone in the code.
                + (["extern:torch.ops._c10d_functional.wait_tensor.default"] if i > 1 else [])
            )
            for i in (1, 2, 3)
        },
    },
}


@pytest.mark.parametrize("log", list(PINNED), ids=ids(list(PINNED)))
def test_kernels_found_per_log(log: Path) -> None:
    assert summary(log) == PINNED[log]


def test_every_log_with_output_code_has_kernels() -> None:
    for log in ALL_LOGS:
        for c in codes(log):
            if "Triton kernels are embedded as comments" in c.text:
                continue  # an AOTI kernel file of a GPU build: one comment line, no code
            assert c.kernels, f"{log.name} {c.label} {c.name}: no kernel found"


@pytest.mark.parametrize("log", ALL_LOGS, ids=ids(ALL_LOGS))
def test_every_definition_and_launch_is_found(log: Path) -> None:
    """Counted independently with plain regexes: nothing is missed, nothing is invented."""
    for c in codes(log):
        defined = re.findall(r"(?m)^(\w+) = async_compile\.(?!wait)", c.text)
        defined += re.findall(r"(?m)^static inline void call_(triton_\w+)\(", c.text)
        defined += re.findall(r'(?m)^extern "C"\s+void (\w+)\(', c.text)  # AOTI, not `kernel`
        found = [k.name for k in c.kernels if k.kind != "extern"]
        assert sorted(found) == sorted(set(defined) - {"kernel"})
        launched = re.findall(r"(?m)^\s+(\w+)\.run\(|^\s+(cpp_fused\w*|call_triton_\w+)\(", c.text)
        launch_count = sum(len(k.launch_lines) for k in c.kernels if k.kind != "extern")
        assert launch_count == len(launched)


# --- kinds --------------------------------------------------------------------


@pytest.mark.parametrize("log", GPU_LOGS, ids=ids(GPU_LOGS))
def test_every_triton_kernel_is_classified(log: Path) -> None:
    heuristic_kind = {
        "pointwise": "triton_pointwise",
        "persistent_reduction": "triton_persistent_reduction",
        "reduction": "triton_reduction",
        "template": "triton_template",
    }
    prefix_kind = {
        "triton_poi_": "triton_pointwise",
        "triton_per_": "triton_persistent_reduction",
        "triton_red_": "triton_reduction",
        "triton_tem_": "triton_template",
    }
    triton = [k for c in codes(log) for k in c.kernels if k.name.startswith("triton_")]
    assert triton
    for k in triton:
        m = re.search(r"@triton_heuristics\.(\w+)\(", k.source)
        assert m, k.name
        assert k.kind == heuristic_kind[m.group(1)], k.name
        assert k.kind == prefix_kind[k.name[:11]], k.name
        assert f"def {k.name}(" in k.source  # the whole Triton source, not just a header


def test_kinds_are_from_the_documented_set() -> None:
    for log in ALL_LOGS:
        for c in codes(log):
            assert all(k.kind in KERNEL_KINDS for k in c.kernels)


def test_cpu_logs_have_no_triton() -> None:
    for log in CPU_LOGS:
        kinds = {k.kind for c in codes(log) for k in c.kernels}
        assert kinds <= {"cpp", "extern"}, log.name
        assert "cpp" in kinds


# --- lines --------------------------------------------------------------------


@pytest.mark.parametrize("log", ALL_LOGS, ids=ids(ALL_LOGS))
def test_lines_point_at_the_kernel(log: Path) -> None:
    for c in codes(log):
        for k in c.kernels:
            first = c.lines[k.definition_line - 1]
            assert k.name in first, (k.name, first)
            if k.kind != "extern":
                assert k.source.split("\n")[0] == first
                assert ("async_compile." in first) or ("void" in first), first
            for n in k.launch_lines:
                line = c.lines[n - 1]
                assert k.name in line, (k.name, line)
                assert not line.lstrip().startswith(("#", "//")), line
            assert k.launch_lines == sorted(set(k.launch_lines))
            if c.name != "inductor_aot_kernel_code":
                assert k.launch_lines, f"{k.name} is never launched"


def test_jit_triton_source_is_the_whole_definition() -> None:
    c = code(INPUTS / "inductor_provenance_jit_cuda_log.txt")
    k = c.kernel("triton_poi_fused_mul_1")
    src = k.source.split("\n")
    assert src[0] == "triton_poi_fused_mul_1 = async_compile.triton('triton_poi_fused_mul_1', '''"
    assert src[-1] == "''', device_str='cuda')"
    assert "def triton_poi_fused_mul_1(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):" in src
    # Lines of the source are the payload's lines from definition_line on.
    assert src == c.lines[k.definition_line - 1 : k.definition_line - 1 + len(src)]
    assert (
        c.lines[k.launch_lines[0] - 1].strip().startswith("triton_poi_fused_mul_1.run(arg3_1, buf2")
    )


def test_cpp_kernel_source_and_launch() -> None:
    c = code(SHARED / "simple" / "dedicated_log_torch_trace_5aek85xk.log")
    k = c.kernel("cpp_fused_relu_0")
    assert k.source.startswith("cpp_fused_relu_0 = async_compile.cpp_pybinding(['float*'], r'''")
    assert k.source.endswith("''')")
    assert 'extern "C"  void  kernel(float* in_out_ptr0)' in k.source
    assert [c.lines[n - 1].strip() for n in k.launch_lines] == ["cpp_fused_relu_0(buf1)"]


def test_aoti_triton_kernel_is_the_call_helper() -> None:
    c = code(INPUTS / "inductor_provenance_aot_cuda_log.txt", "inductor_aot_wrapper_code")
    k = c.kernel("triton_poi_fused_mul_1")
    assert c.lines[k.definition_line - 1] == "static inline void call_triton_poi_fused_mul_1("
    assert "@triton_heuristics.pointwise(" in k.source  # the Triton source, embedded as a comment
    assert k.source.split("\n")[-1] == "}"
    assert [c.lines[n - 1].strip()[:28] for n in k.launch_lines] == ["call_triton_poi_fused_mul_1("]


def test_aoti_cpp_kernel_declared_in_wrapper_defined_in_kernel_file() -> None:
    log = INPUTS / "inductor_provenance_aot_log.txt"
    wrapper = code(log, "inductor_aot_wrapper_code").kernel("cpp_fused_gelu_1")
    assert wrapper.source == 'extern "C"  void cpp_fused_gelu_1(float* in_out_ptr0);'
    assert len(wrapper.launch_lines) == 1
    kernel_file = code(log, "inductor_aot_kernel_code")
    body = kernel_file.kernel("cpp_fused_gelu_1")
    assert body.source.startswith('extern "C"  void cpp_fused_gelu_1(float* in_out_ptr0)\n{')
    assert body.source.endswith("\n}")
    assert "tmp11.store(in_out_ptr0" in body.source
    assert body.launch_lines == []


# --- source nodes and ATen ops ------------------------------------------------


def test_source_nodes_from_the_comment_before_a_jit_definition() -> None:
    k = code(INPUTS / "inductor_provenance_jit_cuda_log.txt").kernel(
        "triton_poi_fused_addmm_relu_sigmoid_0"
    )
    assert k.source_nodes == ["add", "x_1", "x_2"]
    assert k.aten_ops == ["aten.addmm", "aten.relu", "aten.sigmoid"]


def test_source_nodes_from_the_comment_before_an_aoti_launch() -> None:
    c = code(INPUTS / "inductor_provenance_aot_cuda_log.txt", "inductor_aot_wrapper_code")
    k = c.kernel("triton_poi_fused_addmm_gelu_2")
    assert (k.source_nodes, k.aten_ops) == (["add", "gelu"], ["aten.addmm", "aten.gelu"])
    # `[, relu, sigmoid]`: Inductor leaves an empty slot for a node without a name.
    c = code(INPUTS / "inductor_provenance_aot_debug_handle_log.txt", "inductor_aot_wrapper_code")
    k = c.kernel("triton_poi_fused_addmm_relu_sigmoid_0")
    assert k.source_nodes == ["relu", "sigmoid"]


def test_template_with_empty_aten_list() -> None:
    k = code(INPUTS / "cache_hit_miss.log").kernel("triton_tem_fused_0")
    assert (k.source_nodes, k.aten_ops) == (["flex_attention"], [])


def test_a_comment_belongs_to_the_launch_right_after_it() -> None:
    """CPU JIT code comments only its extern calls: the C++ kernels get nothing of theirs."""
    c = code(SHARED / "simple" / "dedicated_log_torch_trace_5aek85xk.log")
    assert c.kernel("cpp_fused_relu_0").source_nodes == []
    addmm = c.kernel("extern_kernels.addmm")
    assert addmm.source_nodes == ["linear", "x", "linear_1", "x_1", "linear_2"]
    assert addmm.aten_ops == ["aten.t", "aten.addmm", "aten.relu", "aten.gelu"]


# --- extern kernels -------------------------------------------------------------


def test_extern_kernels_one_entry_per_name_with_every_launch() -> None:
    c = code(SHARED / "simple" / "dedicated_log_torch_trace_5aek85xk.log")
    addmm = c.kernel("extern_kernels.addmm")
    assert addmm.kind == "extern"
    assert len(addmm.launch_lines) == 3
    assert addmm.definition_line == addmm.launch_lines[0]
    assert addmm.source.startswith("extern_kernels.addmm(arg1_1, arg2_1, ")


def test_collective_and_fallback_calls_are_externs() -> None:
    c = code(INPUTS / "collectives_parity" / "dedicated_log_torch_trace_rank_0.log", label="[0/3]")
    wait = c.kernel("torch.ops._c10d_functional.wait_tensor.default")
    assert len(wait.launch_lines) == 3
    gather = c.kernel("torch.ops._c10d_functional.all_gather_into_tensor.default")
    assert c.lines[gather.launch_lines[0] - 1].strip().startswith("buf11 = torch.ops.")
    # `assert_size_stride(buf11, ..., 'torch.ops..all_gather_into_tensor.default')` is no call.
    assert len(gather.launch_lines) == 1
    randint = code(INPUTS / "simple.log").kernel("aten.randint.low_out")
    assert randint.kind == "extern" and len(randint.launch_lines) == 1


def test_aoti_shim_calls_are_externs() -> None:
    c = code(INPUTS / "inductor_provenance_aot_log.txt", "inductor_aot_wrapper_code")
    addmm = c.kernel("aoti_torch_cpu_addmm_out")
    assert len(addmm.launch_lines) == 2
    assert all("AOTI_TORCH_ERROR_CODE_CHECK(" in c.lines[n - 1] for n in addmm.launch_lines)
    # Helpers such as aoti_torch_empty_strided / aoti_torch_get_dtype are no kernels.
    assert [k.name for k in c.kernels if k.kind == "extern"] == ["aoti_torch_cpu_addmm_out"]


# --- kinds absent from the bundled logs, on Inductor-shaped snippets -----------


def _triton(name: str, decorator: str, meta: str = "") -> str:
    return (
        f"{name} = async_compile.triton('{name}', '''\n"
        "import triton\n"
        f"@triton_heuristics.{decorator}(\n"
        f"    inductor_meta={{'kernel_name': '{name}'{meta}}},\n"
        ")\n"
        "@triton.jit\n"
        f"def {name}(in_ptr0, XBLOCK : tl.constexpr):\n"
        "    pass\n"
        "''', device_str='cuda')\n"
    )


SNIPPET = (
    _triton("triton_red_fused_sum_0", "reduction")
    + _triton("triton_poi_fused_1", "pointwise", ", 'combo_grid_meta': {'num_kernels': 2}")
    + _triton("triton_for_fused_2", "foreach")
    + _triton("add_kernel_0", "user_autotune")
    + "# Source Nodes: [mul], Original ATen: [aten.mul]\n"
    + "cuda_fused_mul_3 = async_compile.cuda(r'''\n#include <cutlass/cutlass.h>\n''', 'so')\n"
    + "multi_kernel_0 = async_compile.multi_kernel('multi_kernel_0', [\n"
    + "    'triton_red_fused_sum_0',\n])\n"
    + "async_compile.wait(globals())\n"
    + "def call(args):\n"
    + "    triton_red_fused_sum_0.run(buf0, 8, 16, stream=stream0)\n"
    + "    triton_poi_fused_1.run(buf0, buf1, stream=stream0)\n"
    + "    triton_for_fused_2.run(buf2, stream=stream0)\n"
    + "    add_kernel_0.run(buf2, 4, stream=stream0)\n"
    + "    cuda_fused_mul_3.cuda_fused_mul_3(c_void_p(buf0.data_ptr()), None)\n"
    + "    multi_kernel_0.run(buf0, 8, 16)\n"
    + "    buf9 = extern_kernels.convolution(buf0, buf1, None)\n"
)


def test_kinds_of_every_backend() -> None:
    kernels = split_output_code(SNIPPET, "inductor_output_code")
    assert [(k.name, k.kind, len(k.launch_lines)) for k in kernels] == [
        ("triton_red_fused_sum_0", "triton_reduction", 1),
        ("triton_poi_fused_1", "combo", 1),
        ("triton_for_fused_2", "triton_foreach", 1),
        ("add_kernel_0", "triton", 1),
        ("cuda_fused_mul_3", "cuda", 1),
        ("multi_kernel_0", "triton", 1),
        ("extern_kernels.convolution", "extern", 1),
    ]
    cuda = kernels[4]
    assert (cuda.source_nodes, cuda.aten_ops) == (["mul"], ["aten.mul"])  # pre-2.3 comment form


# --- robustness and speed --------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["", "\n", "garbage\x00\x01 ''' (((", "'''\n" * 5, "x = async_compile.triton(", "\r\n" * 3],
)
def test_never_raises_on_junk(text: str) -> None:
    assert isinstance(split_output_code(text, "inductor_output_code"), list)
    assert isinstance(split_output_code(text, "inductor_aot_wrapper_code"), list)


TOKENS = list("ab_( )[]{}'\"#/\n\t=.;:") + [
    "'''",
    "x = async_compile.triton(",
    'extern "C" void f(',
    "static inline void call_triton_x(",
    "    call_triton_x(",
    "    x.run(",
    "# Source Nodes: [a], Original ATen: [",
    "}",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=80).map("".join))
def test_never_raises_on_fuzz(text: str) -> None:
    for kernel in split_output_code(text, "inductor_output_code"):
        assert kernel.definition_line >= 1


def test_truncated_in_the_middle_of_a_kernel() -> None:
    c = code(INPUTS / "inductor_provenance_jit_cuda_log.txt")
    second = c.kernel("triton_poi_fused_mul_1")
    cut = second.definition_line + 10  # inside its Triton source
    kernels = split_output_code("\n".join(c.lines[:cut]), "inductor_output_code")
    assert [(k.name, k.kind) for k in kernels] == [
        ("triton_poi_fused_addmm_relu_sigmoid_0", "triton_pointwise"),
        ("triton_poi_fused_mul_1", "triton_pointwise"),
    ]
    assert kernels[0].source == c.kernel(kernels[0].name).source
    assert kernels[1].source == "\n".join(c.lines[second.definition_line - 1 : cut])
    assert all(not k.launch_lines for k in kernels)


@pytest.mark.parametrize(
    "log",
    [
        INPUTS / "inductor_provenance_jit_cuda_log.txt",
        INPUTS / "inductor_provenance_aot_cuda_log.txt",
    ],
)
def test_every_truncation_keeps_a_prefix_of_the_kernels(log: Path) -> None:
    c = codes(log)[0]
    full = [k.name for k in c.kernels if k.kind != "extern"]
    for cut in range(0, len(c.lines), 7):
        names = [k.name for k in split_output_code("\n".join(c.lines[:cut]), c.name)]
        defined = [n for n in names if n in full]
        assert defined == full[: len(defined)]


def test_fast_on_a_large_payload() -> None:
    """The builder splits every output code while reading a log: 10 MB must take about a second."""
    text = code(INPUTS / "inductor_provenance_jit_cuda_log.txt").text
    big = text * (10_000_000 // len(text))
    start = time.perf_counter()
    kernels = split_output_code(big, "inductor_output_code")
    elapsed = time.perf_counter() - start
    assert len(kernels) == 4  # same names each time: one entry each, launches accumulate
    assert elapsed < 5.0
